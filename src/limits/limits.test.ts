import { afterEach, describe, expect, it } from 'vitest';
import { storeTargets } from '../../test/support/redis-target.js';
import { RateLimiter, RedisLimitStore } from './index.js';
import type { LimitStore } from './types.js';

/** The same cases on every store: the memory store's TypeScript and Redis's Lua must agree. */
describe.each(storeTargets)('rate-limit store: $name', (target) => {
  let store: LimitStore;
  afterEach(() => store?.close());

  it('admits a full bucket of requests, then refuses without taking anything', async () => {
    store = await target.open();
    const limits = { requestsPerMinute: 3 };
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await store.take('k', limits, 0));
    expect(seen.map((d) => [d.allowed, d.requests?.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    const refused = await store.take('k', limits, 0);
    expect(refused.allowed).toBe(false);
    // One request comes back every 20 s; the test has run for far less than a second of that.
    expect(refused.retryAfterMs).toBeGreaterThan(18_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(refused.requests).toMatchObject({ limit: 3, remaining: 0 });
    expect(refused.requests!.resetMs).toBeGreaterThan(58_000);
    // Another key has its own buckets.
    expect((await store.take('other', limits, 0)).allowed).toBe(true);
  });

  it('takes exactly L requests of any limit, however its interval rounds', async () => {
    store = await target.open();
    // Limits whose refill during the test (one request every 0.6 s at most) cannot change the count.
    for (const rpm of [7, 97]) {
      let allowed = 0;
      for (let i = 0; i <= rpm; i++) if ((await store.take(`k${rpm}`, { requestsPerMinute: rpm }, 0)).allowed) allowed++;
      expect(allowed, `rpm ${rpm}`).toBe(rpm);
    }
  });

  it('keeps exact token counts at large limits', async () => {
    store = await target.open();
    const d = await store.take('k', { tokensPerMinute: 30_000_000 }, 10_000);
    expect(d.tokens!.remaining).toBeGreaterThanOrEqual(29_989_000);
    expect(d.tokens!.remaining).toBeLessThanOrEqual(29_990_000);
  });

  it('admits input that fits, refuses what does not, and takes the output afterwards', async () => {
    store = await target.open();
    const limits = { tokensPerMinute: 1000 };
    expect(await store.take('k', limits, 600)).toMatchObject({ allowed: true, tokens: { limit: 1000, remaining: 400 } });
    const noRoom = await store.take('k', limits, 600);
    expect(noRoom.allowed).toBe(false);
    // 200 tokens too many, at 60 ms each.
    expect(noRoom.retryAfterMs).toBeGreaterThan(11_000);
    expect(noRoom.retryAfterMs).toBeLessThanOrEqual(12_000);
    expect(await store.take('k', limits, 400)).toMatchObject({ allowed: true, tokens: { remaining: 0 } });
    // The answers' output, known at settlement, puts the bucket over its limit.
    await store.adjust('k', limits, { tokens: 500 });
    const inDebt = await store.take('k', limits, 1);
    expect(inDebt.allowed).toBe(false);
    expect(inDebt.retryAfterMs).toBeGreaterThan(29_000);
    expect(inDebt.retryAfterMs).toBeLessThanOrEqual(30_060);
    // Answers shorter than expected give tokens back.
    await store.adjust('k', limits, { tokens: -1500 });
    const after = await store.take('k', limits, 100);
    expect(after.allowed).toBe(true);
    expect(after.tokens!.remaining).toBeGreaterThanOrEqual(899);
  });

  it('refuses input larger than the whole limit for good, taking nothing', async () => {
    store = await target.open();
    const d = await store.take('k', { requestsPerMinute: 5, tokensPerMinute: 100 }, 150);
    expect(d).toMatchObject({ allowed: false, tooLarge: true, requests: { remaining: 5 }, tokens: { remaining: 100 } });
  });

  it('refuses on either limit without charging the other, and gives a refused hold back', async () => {
    store = await target.open();
    const limits = { requestsPerMinute: 2, tokensPerMinute: 100 };
    expect((await store.take('k', limits, 50)).allowed).toBe(true);
    const byTokens = await store.take('k', limits, 60);
    expect(byTokens.allowed).toBe(false);
    expect(byTokens.requests!.remaining).toBe(1);
    // The first request's hold was refused: its request and input come back.
    await store.adjust('k', limits, { requests: -1, tokens: -50 });
    expect(await store.take('k', limits, 60)).toMatchObject({ allowed: true, requests: { remaining: 1 } });
    expect((await store.take('k', limits, 10)).allowed).toBe(true);
    const byRequests = await store.take('k', limits, 10);
    expect(byRequests.allowed).toBe(false);
    expect(byRequests.tokens!.remaining).toBeGreaterThanOrEqual(29);
  });

  it('never makes a key wait longer for a lowered limit than it already had to', async () => {
    store = await target.open();
    for (let i = 0; i < 120; i++) expect((await store.take('k', { requestsPerMinute: 120 }, 0)).allowed).toBe(true);
    const lowered = await store.take('k', { requestsPerMinute: 2 }, 0);
    expect(lowered.allowed).toBe(false);
    // Under 120 a minute the bucket was full again within a minute; it still is under 2.
    expect(lowered.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(lowered.requests!.resetMs).toBeLessThanOrEqual(60_000);
  });

  it('applies a changed limit at once: raising it lets a key in debt through', async () => {
    store = await target.open();
    expect((await store.take('k', { tokensPerMinute: 10 }, 10)).allowed).toBe(true);
    await store.adjust('k', { tokensPerMinute: 10 }, { tokens: 5000 });
    expect((await store.take('k', { tokensPerMinute: 10 }, 1)).allowed).toBe(false);
    expect(await store.take('k', { tokensPerMinute: 1_000_000 }, 1)).toMatchObject({ allowed: true, tokens: { limit: 1_000_000 } });
  });
});

describe('rate-limit memory store over time', () => {
  it('refills continuously', async () => {
    let now = 1_000_000;
    const store = await storeTargets[0].open(() => now);
    const limits = { requestsPerMinute: 60, tokensPerMinute: 600 };
    for (let i = 0; i < 60; i++) expect((await store.take('k', limits, 0)).allowed).toBe(true);
    const refused = await store.take('k', limits, 0);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 1000 });
    now += 999;
    expect((await store.take('k', limits, 0)).allowed).toBe(false);
    now += 1;
    expect(await store.take('k', limits, 0)).toMatchObject({ allowed: true, requests: { remaining: 0 } });
    now += 30_000;
    expect((await store.take('k', limits, 0)).requests!.remaining).toBe(29);
    // Tokens: 1,200 used of 600 a minute refuse for a minute, then admit.
    await store.adjust('k', limits, { tokens: 1200 });
    expect(await store.take('k', limits, 0)).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
    now += 60_000;
    expect((await store.take('k', limits, 0)).allowed).toBe(true);
  });
});

describe('RateLimiter', () => {
  const log = () => ({ warnings: 0, warn() { this.warnings++; } });
  const failing = (available: boolean): LimitStore & { takes: number } => ({
    takes: 0,
    take() {
      this.takes++;
      return Promise.reject(new Error('Command timed out'));
    },
    adjust: () => Promise.reject(new Error('Command timed out')),
    available: () => available,
    close: async () => undefined,
  });

  it('asks nothing of the store for a key without limits', async () => {
    const store = failing(true);
    const limiter = new RateLimiter(store, log());
    expect(await limiter.admit('k', undefined, 10)).toBeUndefined();
    expect(await limiter.admit('k', {}, 10)).toBeUndefined();
    expect(store.takes).toBe(0);
  });

  it('admits, and warns once, when the store does not answer', async () => {
    const warn = log();
    const limiter = new RateLimiter(failing(true), warn);
    expect(await limiter.admit('k', { requestsPerMinute: 1 }, 10)).toBeUndefined();
    expect(await limiter.admit('k', { requestsPerMinute: 1 }, 10)).toBeUndefined();
    limiter.adjust('k', { tokensPerMinute: 1 }, { tokens: 5 });
    await new Promise((r) => setImmediate(r));
    expect(warn.warnings).toBe(1);
  });

  it('does not even try a store that is disconnected', async () => {
    const store = failing(false);
    const limiter = new RateLimiter(store, log());
    expect(await limiter.admit('k', { requestsPerMinute: 1 }, 10)).toBeUndefined();
    expect(store.takes).toBe(0);
  });
});

describe('connecting to Redis', () => {
  it('names REDIS_URL and the cause, and never prints the password', async () => {
    const refused: Error = await RedisLimitStore.connect('redis://app:s3cret@127.0.0.1:1').catch((e) => e);
    expect(refused.message).toMatch(/REDIS_URL/);
    expect(refused.message).toMatch(/ECONNREFUSED/);
    expect(refused.message).not.toContain('s3cret');
    for (const url of ['redis://app:s3cret@[bad', 'notaurl://x:s3cret@h', 'redis://:s3cret@pw@127.0.0.1:1']) {
      const err: Error = await RedisLimitStore.connect(url).catch((e) => e);
      expect(err.message, url).toMatch(/REDIS_URL/);
      expect(err.message, url).not.toMatch(/s3cret|@pw/);
    }
  });
});
