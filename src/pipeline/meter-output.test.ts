import { describe, expect, it } from 'vitest';
import { countTokens } from '../util/tokenizer.js';
import { billableUsage, OutputMeter } from './meter-output.js';

/** Feeds pieces into one text block until the meter says the ceiling is reached. */
function feed(meter: OutputMeter, pieces: string[]): { admitted: string; reached: boolean } {
  meter.track({ type: 'text-start', id: 't' });
  let admitted = '';
  for (const piece of pieces) {
    const r = meter.admit('t', piece);
    admitted += r.text;
    if (r.reached) return { admitted, reached: true };
  }
  return { admitted, reached: false };
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i} `);

describe('OutputMeter', () => {
  it('admits everything below the ceiling, and counts it exactly for billing', () => {
    const meter = new OutputMeter(256);
    const { admitted, reached } = feed(meter, words(20));
    expect(reached).toBe(false);
    expect(admitted).toBe(words(20).join(''));
    expect(meter.exactOutput().total).toBe(countTokens(admitted));
  });

  it('cuts an upstream that overshoots at the ceiling, never above it', () => {
    for (const max of [1, 7, 50, 333]) {
      const meter = new OutputMeter(max);
      const { admitted, reached } = feed(meter, words(400));
      expect(reached, `max ${max}`).toBe(true);
      // The last piece is cut by its own tokens, which can merge differently inside the text.
      expect(countTokens(admitted), `max ${max}`).toBeLessThanOrEqual(max);
      expect(countTokens(admitted), `max ${max}`).toBeGreaterThanOrEqual(max - 1);
    }
  });

  it('counts multi-byte text near the ceiling by tokens, not bytes', () => {
    // Each emoji is 4 bytes and 1-3 tokens: bytes alone would cut far too early.
    const meter = new OutputMeter(40);
    const { admitted, reached } = feed(meter, Array.from({ length: 100 }, () => '🚂 '));
    expect(reached).toBe(true);
    expect(countTokens(admitted)).toBeLessThanOrEqual(40);
    expect(countTokens(admitted)).toBeGreaterThanOrEqual(39);
  });
});

describe('billableUsage', () => {
  it('bills the output an upstream reports in full, even above the ceiling (the provider bills it so)', () => {
    const meter = new OutputMeter(100);
    feed(meter, words(10));
    meter.usage = { input: { noCache: 10, cacheRead: 0, cacheWrite: 0 }, output: { total: 5_000, reasoning: 4_000 } };
    expect(billableUsage(meter, 7)).toEqual({ input: { noCache: 10, cacheRead: 0, cacheWrite: 0 }, output: { total: 5_000, reasoning: 4_000 } });
  });

  it("bills the gateway's own count when the upstream reports no output: what it let through, at most the ceiling", () => {
    const meter = new OutputMeter(50);
    const { admitted } = feed(meter, words(400));
    const usage = billableUsage(meter, 7);
    expect(usage.input).toEqual({ noCache: 7, cacheRead: 0, cacheWrite: 0 });
    expect(usage.output.total).toBe(Math.min(countTokens(admitted), 50));
    expect(usage.output.total).toBeGreaterThanOrEqual(49);
  });
});
