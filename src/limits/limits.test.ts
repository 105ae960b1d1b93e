import { afterEach, describe, expect, it } from 'vitest';
import { storeTargets } from '../../test/support/redis-target.js';
import { RateLimiter } from './index.js';
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

  it('takes the L-th request of a limit whose interval is not a whole number of ms', async () => {
    store = await target.open();
    const limits = { requestsPerMinute: 7 };
    const allowed = [];
    for (let i = 0; i < 8; i++) allowed.push((await store.take('k', limits, 0)).allowed);
    expect(allowed).toEqual([true, true, true, true, true, true, true, false]);
  });

  it('admits while the token bucket is not empty, lets it go into debt, and takes corrections', async () => {
    store = await target.open();
    const limits = { tokensPerMinute: 1000 };
    const first = await store.take('k', limits, 600);
    expect(first).toMatchObject({ allowed: true, tokens: { limit: 1000, remaining: 400 } });
    const second = await store.take('k', limits, 600);
    expect(second).toMatchObject({ allowed: true, tokens: { remaining: 0 } });
    const refused = await store.take('k', limits, 1);
    expect(refused.allowed).toBe(false);
    // 200 tokens of debt at 60 ms each, plus one token: about 12 s.
    expect(refused.retryAfterMs).toBeGreaterThan(11_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(12_060);
    // The answers used less than was taken: the difference comes back.
    await store.adjust('k', limits, -900);
    const after = await store.take('k', limits, 100);
    expect(after.allowed).toBe(true);
    expect(after.tokens!.remaining).toBeGreaterThanOrEqual(600);
    expect(after.tokens!.remaining).toBeLessThanOrEqual(601);
  });

  it('refuses on either limit without charging the other', async () => {
    store = await target.open();
    const limits = { requestsPerMinute: 2, tokensPerMinute: 100 };
    expect((await store.take('k', limits, 150)).allowed).toBe(true);
    const byTokens = await store.take('k', limits, 10);
    expect(byTokens.allowed).toBe(false);
    expect(byTokens.requests!.remaining).toBe(1);
    await store.adjust('k', limits, -150);
    expect((await store.take('k', limits, 10)).allowed).toBe(true);
    const byRequests = await store.take('k', limits, 10);
    expect(byRequests.allowed).toBe(false);
    expect(byRequests.tokens!.remaining).toBeGreaterThanOrEqual(89);
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
    // Tokens: 1,200 in debt refuse for a minute and a tenth of a second, then admit.
    await store.adjust('k', limits, 1200);
    const byTokens = await store.take('k', limits, 0);
    expect(byTokens).toMatchObject({ allowed: false, retryAfterMs: 60_100 });
    now += 60_100;
    expect((await store.take('k', limits, 0)).allowed).toBe(true);
  });
});

describe('RateLimiter', () => {
  const log = { warnings: 0, warn() { this.warnings++; } };
  const failing: LimitStore = {
    take: () => Promise.reject(new Error('connection is closed')),
    adjust: () => Promise.reject(new Error('connection is closed')),
    close: async () => undefined,
  };

  it('asks nothing of the store for a key without limits', async () => {
    const limiter = new RateLimiter(failing, log);
    expect(await limiter.admit('k', undefined, 10)).toBeUndefined();
    expect(await limiter.admit('k', {}, 10)).toBeUndefined();
    expect(log.warnings).toBe(0);
  });

  it('admits, and warns once, when the store cannot answer', async () => {
    const limiter = new RateLimiter(failing, log);
    expect(await limiter.admit('k', { requestsPerMinute: 1 }, 10)).toBeUndefined();
    expect(await limiter.admit('k', { requestsPerMinute: 1 }, 10)).toBeUndefined();
    limiter.correct('k', { tokensPerMinute: 1 }, 5);
    await new Promise((r) => setImmediate(r));
    expect(log.warnings).toBe(1);
  });
});
