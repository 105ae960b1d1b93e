import { describe, expect, it } from 'vitest';
import { KeyCache } from './key-cache.js';

describe('KeyCache', () => {
  const auth = { accountId: 'acct_a', keyId: 'key_a', limits: { requestsPerMinute: 1 } };

  it('answers for a verified key until its time-to-live, and forgets an evicted one', () => {
    let now = 0;
    const cache = new KeyCache({ ttlMs: 1000, maxEntries: 10 }, () => now);
    cache.set('h', auth, cache.version());
    expect(cache.get('h')).toBe(auth);
    cache.evictKeyId('key_a');
    expect(cache.get('h')).toBeUndefined();
    cache.set('h', auth, cache.version());
    now = 1000;
    expect(cache.get('h')).toBeUndefined();
  });

  it('does not cache a read that an eviction overtook (the key changed while it was read)', () => {
    const cache = new KeyCache({ ttlMs: 1000, maxEntries: 10 });
    const before = cache.version();
    cache.evictKeyId('key_a'); // PATCH or revoke lands while the database read is in flight
    cache.set('h', auth, before);
    expect(cache.get('h')).toBeUndefined();
  });
});
