import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, retryAfterMs, retryDelayMs } from './retry-delay.js';

const backoff = { baseMs: 1_000, maxMs: 60_000 };

describe('retry delay', () => {
  it('doubles from the base up to the cap, half of each step random', () => {
    const low = (n: number) => retryDelayMs(n, undefined, 0, () => 0, backoff);
    const high = (n: number) => retryDelayMs(n, undefined, 0, () => 1, backoff);
    expect([0, 1, 2, 3].map(low)).toEqual([500, 1_000, 2_000, 4_000]);
    expect([0, 1, 2, 3].map(high)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(high(10)).toBe(60_000);
    expect(low(10_000)).toBe(30_000);
  });

  it('follows retry-after, in seconds or as a date, within bounds', () => {
    expect(retryDelayMs(5, '3', 0, () => 1, backoff)).toBe(3_000);
    expect(retryDelayMs(0, 'Thu, 01 Jan 1970 00:00:10 GMT', 4_000, () => 1, backoff)).toBe(6_000);
    expect(retryDelayMs(0, '0', 0, () => 1, backoff)).toBe(100);
    expect(retryDelayMs(0, '999999', 0, () => 1, backoff)).toBe(MAX_RETRY_AFTER_MS);
    // Unreadable: the backoff.
    expect(retryDelayMs(0, 'soon', 0, () => 1, backoff)).toBe(1_000);
  });

  it('reads retry-after as RFC 9110 writes it', () => {
    expect(retryAfterMs(null, 0)).toBeUndefined();
    expect(retryAfterMs(' 2 ', 0)).toBe(2_000);
    expect(retryAfterMs('-1', 0)).toBeUndefined();
    expect(retryAfterMs('Thu, 01 Jan 1970 00:00:01 GMT', 5_000)).toBe(0);
  });
});
