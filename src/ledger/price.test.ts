import { describe, expect, it } from 'vitest';
import { costOf, holdAmount } from './price.js';
import type { Price } from '../routing/catalog.js';

const sonnet: Price = { input: 3000n, output: 15000n, cacheRead: 300n, cacheWrite: 3750n };
const mini: Price = { input: 150n, output: 600n, cacheRead: 75n, cacheWrite: 150n };

describe('costOf', () => {
  it('prices each input share at its own rate and output (with reasoning inside) at the output rate', () => {
    const u = { input: { noCache: 1000, cacheRead: 2000, cacheWrite: 100 }, output: { total: 500, reasoning: 200 } };
    expect(costOf(u, sonnet)).toBe(1000n * 3000n + 2000n * 300n + 100n * 3750n + 500n * 15000n);
  });

  it('is exact beyond 2^53 nanodollars', () => {
    const big: Price = { input: 10n ** 12n, output: 0n, cacheRead: 0n, cacheWrite: 0n };
    const u = { input: { noCache: 9_000_001, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, reasoning: 0 } };
    expect(costOf(u, big)).toBe(9_000_001_000_000_000_000n);
  });

  it('rejects counts that are not non-negative integers', () => {
    const bad = { input: { noCache: 1.5, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, reasoning: 0 } };
    expect(() => costOf(bad, mini)).toThrow(RangeError);
    const neg = { input: { noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: -1, reasoning: 0 } };
    expect(() => costOf(neg, mini)).toThrow(RangeError);
  });
});

describe('holdAmount', () => {
  it('takes the highest input-side and output prices among the candidates', () => {
    // Sonnet's cache write (3750) is the worst input rate; its output (15000) the worst output rate.
    expect(holdAmount(1000, 4096, [mini, sonnet])).toBe(1000n * 3750n + 4096n * 15000n);
    expect(holdAmount(1000, 4096, [mini])).toBe(1000n * 150n + 4096n * 600n);
  });

  it('covers whatever any single candidate could charge for that request', () => {
    const u = { input: { noCache: 400, cacheRead: 300, cacheWrite: 300 }, output: { total: 4096, reasoning: 1000 } };
    const hold = holdAmount(1000, 4096, [mini, sonnet]);
    for (const p of [mini, sonnet]) expect(costOf(u, p) <= hold).toBe(true);
  });

  it('needs at least one candidate', () => {
    expect(() => holdAmount(1, 1, [])).toThrow(RangeError);
  });
});
