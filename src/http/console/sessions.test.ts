import { describe, expect, it } from 'vitest';
import { SessionStore } from './sessions.js';

describe('console sessions', () => {
  it('end after the idle time, are kept alive by use, and end at the absolute limit whatever the use', () => {
    let now = 0;
    const store = new SessionStore({ idleMs: 100, maxMs: 250 }, () => now);
    const s = store.create('operator');
    expect(s.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.csrf).not.toBe(s.id);
    now = 90;
    expect(store.touch(s.id)?.role).toBe('operator');
    now = 180;
    expect(store.touch(s.id)).toBeDefined();
    now = 249;
    expect(store.touch(s.id)).toBeDefined();
    now = 250;
    expect(store.touch(s.id)).toBeUndefined();

    const idle = store.create('key_holder', { key: 'sk-sy-x', accountId: 'acct_1' });
    now = 350;
    expect(store.touch(idle.id)).toBeUndefined();
  });

  it('forget a session signed out, and know no other id', () => {
    const store = new SessionStore();
    const s = store.create('operator');
    expect(store.touch('not-a-session')).toBeUndefined();
    expect(store.touch(undefined)).toBeUndefined();
    store.end(s.id);
    expect(store.touch(s.id)).toBeUndefined();
  });
});
