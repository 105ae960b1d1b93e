import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Usage } from '../ir/usage.js';
import type { Price, TokenRates } from '../routing/catalog.js';
import { costOf, holdAmount, priceUsage, requestHold, roundUpToNanos, splitRoundedUp, unitsAsNanosText } from './price.js';

/** $1 per million tokens in femtodollars per token. */
const M = 1_000_000_000n;

const sonnet: Price = { input: 3n * M, output: 15n * M, cacheRead: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6n * M };
const mini: Price = { input: 150_000_000n, output: 600_000_000n, cacheRead: 75_000_000n, cacheWrite: 150_000_000n, cacheWrite1h: 150_000_000n };

function usage(input: Partial<Usage['input']>, output: Partial<Usage['output']> = {}, extra: Partial<Usage> = {}): Usage {
  return { input: { noCache: 0, cacheRead: 0, cacheWrite: 0, ...input }, output: { total: 0, reasoning: 0, ...output }, ...extra };
}

describe('costOf', () => {
  it('prices each kind of token at its rate, reasoning as output when not priced apart', () => {
    const u = usage({ noCache: 1000, cacheRead: 2000, cacheWrite: 100 }, { total: 500, reasoning: 200 });
    // 1000 x $3 + 2000 x $0.30 + 100 x $3.75 + 500 x $15 per million, in nanodollars.
    expect(costOf(u, sonnet)).toBe(3_000_000n + 600_000n + 375_000n + 7_500_000n);
  });

  it('splits cache writes by lifetime: a 1-hour write at its own rate (Anthropic: 2x input)', () => {
    const u = usage({ cacheWrite: 1_000_000, cacheWrite1h: 400_000 });
    // 600k at $3.75 + 400k at $6 per million.
    expect(costOf(u, sonnet)).toBe(2_250_000_000n + 2_400_000_000n);
  });

  it('rounds once, per request: $0.0375 per million is not billed as $0.038', () => {
    const p: Price = { ...mini, cacheRead: 37_500_000n };
    // 1000 tokens x 37.5 nanodollars = 37500 exactly (per-token rounding gave 38000).
    expect(costOf(usage({ cacheRead: 1000 }), p)).toBe(37_500n);
    // One token: 37.5 nanodollars, rounded up to 38 once.
    expect(costOf(usage({ cacheRead: 1 }), p)).toBe(38n);
  });

  it('bills the whole request at the long-context tier once the prompt is above it', () => {
    const tiered: Price = {
      ...sonnet,
      tiers: [{ above: 200_000, rates: { input: 6n * M, output: 22_500_000_000n, cacheRead: 600_000_000n, cacheWrite: 7_500_000_000n, cacheWrite1h: 12n * M } }],
    };
    // 200,000 prompt tokens is not above the threshold: base prices.
    expect(costOf(usage({ noCache: 150_000, cacheRead: 50_000 }, { total: 1000 }), tiered)).toBe(450_000_000n + 15_000_000n + 15_000_000n);
    // 200,001 (cache reads count toward the prompt): every token, output included, at the tier.
    const above = priceUsage(usage({ noCache: 150_001, cacheRead: 50_000 }, { total: 1000 }), tiered);
    expect(above.above).toBe(200_000);
    expect(roundUpToNanos(above.exact)).toBe(900_006_000n + 30_000_000n + 22_500_000n);
  });

  it('bills the service tier that served, and standard prices for a tier not priced apart', () => {
    const p: Price = { ...mini, serviceTiers: { flex: { ...mini, input: 75_000_000n, output: 300_000_000n } } };
    const u = (serviceTier?: string) => usage({ noCache: 1_000_000 }, { total: 1_000_000 }, serviceTier ? { serviceTier } : {});
    expect(costOf(u(), p)).toBe(750_000_000n);
    expect(costOf(u('flex'), p)).toBe(375_000_000n);
    expect(priceUsage(u('flex'), p).serviceTier).toBe('flex');
    expect(costOf(u('default'), p)).toBe(750_000_000n);
  });

  it('bills server tools per use, and reasoning, audio and image tokens at their own rates where priced apart', () => {
    const p: Price = { ...mini, reasoning: 2n * M, inputAudio: 40n * M, outputAudio: 80n * M, perUse: { web_search: 10_000_000_000_000n } };
    const u = usage({ noCache: 1000, audio: 100 }, { total: 1000, reasoning: 300, audio: 200 }, { serverTools: { web_search: 3, web_fetch: 2 } });
    const priced = priceUsage(u, p);
    expect(priced.lines).toEqual([
      { kind: 'input', count: 900, rate: 150_000_000n },
      { kind: 'input_audio', count: 100, rate: 40n * M },
      { kind: 'output', count: 500, rate: 600_000_000n },
      { kind: 'reasoning', count: 300, rate: 2n * M },
      { kind: 'output_audio', count: 200, rate: 80n * M },
      // web_fetch has no fee here: not a line.
      { kind: 'web_search', count: 3, rate: 10_000_000_000_000n },
    ]);
    expect(costOf(u, p)).toBe(135_000n + 4_000_000n + 300_000n + 600_000n + 16_000_000n + 30_000_000n);
  });

  it('counts fit in bigint at any scale: 9,000,001 tokens at $1000 per million', () => {
    const big: Price = { input: 10n ** 12n, output: 0n, cacheRead: 0n, cacheWrite: 0n, cacheWrite1h: 0n };
    expect(costOf(usage({ noCache: 9_000_001 }), big)).toBe(9_000_001_000_000n);
  });

  it('rejects counts that are not non-negative integers', () => {
    expect(() => costOf(usage({ noCache: 1.5 }), mini)).toThrow(RangeError);
    expect(() => costOf(usage({}, { total: -1 }), mini)).toThrow(RangeError);
    expect(() => costOf(usage({}, {}, { serverTools: { web_search: -1 } }), { ...mini, perUse: { web_search: 1n } })).toThrow(RangeError);
  });
});

describe('the charge is the exact sum rounded up once (property)', () => {
  const rate = fc.bigInt({ min: 0n, max: 100n * M });
  const rates = fc.record<TokenRates>({ input: rate, output: rate, cacheRead: rate, cacheWrite: rate, cacheWrite1h: rate, reasoning: rate });
  const price = fc.record({ base: rates, tier: rates, above: fc.integer({ min: 1, max: 2_000_000 }), fee: rate }).map(
    ({ base, tier, above, fee }): Price => ({ ...base, tiers: [{ above, rates: tier }], perUse: { web_search: fee } }),
  );
  const count = fc.integer({ min: 0, max: 2_000_000 });
  const anyUsage = fc
    .record({ noCache: count, cacheRead: count, cacheWrite: count, oneHour: count, total: count, reasoning: count, searches: fc.integer({ min: 0, max: 50 }) })
    .map(({ noCache, cacheRead, cacheWrite, oneHour, total, reasoning, searches }) =>
      usage({ noCache, cacheRead, cacheWrite, cacheWrite1h: Math.min(oneHour, cacheWrite) }, { total, reasoning: Math.min(reasoning, total) }, { serverTools: { web_search: searches } }),
    );

  /** The price sheet's arithmetic, written out independently: every kind at its rate, in USD x 1e15. */
  function sheet(u: Usage, p: Price): bigint {
    const prompt = u.input.noCache + u.input.cacheRead + u.input.cacheWrite;
    const r = prompt > p.tiers![0].above ? p.tiers![0].rates : p;
    const oneHour = u.input.cacheWrite1h ?? 0;
    return (
      BigInt(u.input.noCache) * r.input +
      BigInt(u.input.cacheRead) * r.cacheRead +
      BigInt(u.input.cacheWrite - oneHour) * r.cacheWrite +
      BigInt(oneHour) * r.cacheWrite1h +
      BigInt(u.output.total - u.output.reasoning) * r.output +
      BigInt(u.output.reasoning) * r.reasoning! +
      BigInt(u.serverTools!.web_search) * p.perUse!.web_search
    );
  }

  it('one attempt: its cost is the sheet\'s exact sum rounded up to the nanodollar', () => {
    fc.assert(
      fc.property(anyUsage, price, (u, p) => {
        const exact = sheet(u, p);
        const cost = costOf(u, p);
        expect(cost * 1_000_000n >= exact && (cost - 1n) * 1_000_000n < exact).toBe(true);
      }),
    );
  });

  it('several attempts: their charges add up to the exact total rounded up once', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(anyUsage, price), { minLength: 1, maxLength: 6 }), (attempts) => {
        const exacts = attempts.map(([u, p]) => priceUsage(u, p).exact);
        const total = exacts.reduce((a, b) => a + b, 0n);
        const charges = splitRoundedUp(exacts);
        expect(charges.every((c) => c >= 0n)).toBe(true);
        expect(charges.reduce((a, b) => a + b, 0n)).toBe(roundUpToNanos(total));
        expect(roundUpToNanos(total)).toBe(roundUpToNanos(attempts.reduce((s, [u, p]) => s + sheet(u, p), 0n)));
      }),
    );
  });
});

describe('holdAmount and requestHold: a true worst case', () => {
  it('uses the highest input-side and output-side rates across candidate prices', () => {
    // Input at the 5-minute write (above plain input), output at the highest output rate.
    expect(holdAmount(1000, 4096, [mini, sonnet])).toBe(3_750_000n + 61_440_000n);
    expect(holdAmount(1000, 4096, [mini])).toBe(150_000n + 2_457_600n);
  });

  it('holds a 1-hour cache write when the request asks for one', () => {
    expect(holdAmount(1000, 0, [sonnet])).toBe(3_750_000n);
    expect(holdAmount(1000, 0, [sonnet], { cacheWrite1h: true })).toBe(6_000_000n);
  });

  it('covers any usage a candidate can report within the prompt and ceiling, whatever its cache split', () => {
    const u = usage({ noCache: 400, cacheRead: 300, cacheWrite: 300, cacheWrite1h: 300 }, { total: 4096, reasoning: 1000 });
    const hold = holdAmount(1000, 4096, [mini, sonnet], { cacheWrite1h: true });
    for (const p of [mini, sonnet]) expect(costOf(u, p) <= hold).toBe(true);
  });

  it('holds a prompt near a tier boundary at the higher tier, once the tokenizer margin reaches past it', () => {
    const tiered: Price = { ...sonnet, tiers: [{ above: 200_000, rates: { ...sonnet, input: 6n * M, cacheWrite: 7_500_000_000n, output: 22_500_000_000n } }] };
    // 190,000 by the gateway's count; a provider counting 10% more is above 200,000.
    const without = requestHold(190_000, [{ maxTokens: 1000, price: tiered }]);
    const withMargin = requestHold(190_000, [{ maxTokens: 1000, price: tiered, inputMargin: 0.1 }]);
    expect(without).toBe(190_000n * 3750n + 1000n * 15_000n);
    expect(withMargin).toBe(209_000n * 7500n + 1000n * 22_500n);
  });

  it('holds the dearest service tier and the allowed server-tool uses', () => {
    const p: Price = { ...mini, perUse: { web_search: 10_000_000_000_000n }, serviceTiers: { priority: { ...mini, input: 300_000_000n, output: 1_200_000_000n } } };
    expect(requestHold(1000, [{ maxTokens: 1000, price: p }], { serverToolUses: { web_search: 5 } })).toBe(300_000n + 1_200_000n + 50_000_000n);
  });

  it('sums the fallback chain and rounds up once; never zero', () => {
    const cheap: Price = { ...mini, input: 1n, output: 1n, cacheWrite: 1n, cacheWrite1h: 1n };
    // Two candidates of 1 femtodollar per token: 20 femtodollars in all, one nanodollar held.
    expect(requestHold(5, [{ maxTokens: 5, price: cheap }, { maxTokens: 5, price: cheap }])).toBe(1n);
    const free: Price = { input: 0n, output: 0n, cacheRead: 0n, cacheWrite: 0n, cacheWrite1h: 0n };
    expect(requestHold(1000, [{ maxTokens: 1000, price: free }])).toBe(1n);
  });

  it('rejects an empty candidate list', () => {
    expect(() => holdAmount(1, 1, [])).toThrow(RangeError);
    expect(() => requestHold(1, [])).toThrow(RangeError);
  });
});

describe('unitsAsNanosText', () => {
  it('writes rate units as exact decimal nanodollars', () => {
    expect([37_500_000n, 3n * M, 1n, 0n, 1_000_000n, 123_456_789n, -2_500_000n].map(unitsAsNanosText)).toEqual(['37.5', '3000', '0.000001', '0', '1', '123.456789', '-2.5']);
  });
  it('is the exact value: read back it is the units again', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), (u) => {
      const [whole, frac = ''] = unitsAsNanosText(u).split('.');
      return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, '0')) === u;
    }));
  });
});
