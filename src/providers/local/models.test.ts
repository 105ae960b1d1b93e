import { describe, expect, it } from 'vitest';
import { localModels } from './models.js';

describe('localModels', () => {
  const models = localModels();
  const byId = new Map(models.map((m) => [m.id, m]));

  it('has unique ids and aliases, and every reference points at a model', () => {
    expect(byId.size).toBe(models.length);
    const aliases = models.flatMap((m) => m.aliases);
    expect(new Set(aliases).size).toBe(aliases.length);
    for (const m of models) {
      for (const f of m.fallbacks) expect(byId.has(f), `${m.id} -> ${f}`).toBe(true);
      expect(m.fallbacks).not.toContain(m.id);
      if (m.fast?.model) expect(byId.has(m.fast.model)).toBe(true);
    }
  });

  it('prices in integer nanodollars per token, opus the dearest', () => {
    for (const m of models) {
      for (const v of Object.values(m.price)) expect(typeof v).toBe('bigint');
      expect(m.price.cacheRead).toBeLessThan(m.price.input);
      expect(m.price.cacheWrite).toBeGreaterThan(m.price.input);
    }
    expect(byId.get('local-sonnet')?.price).toEqual({ input: 3_000_000_000n, output: 15_000_000_000n, cacheRead: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6_000_000_000n });
    const opus = byId.get('local-opus')?.price.output ?? 0n;
    for (const m of models) expect(m.price.output <= opus).toBe(true);
  });

  it('gives the fast variant a higher speed than its parent', () => {
    const sonnet = byId.get('local-sonnet');
    const fast = byId.get(sonnet?.fast?.model ?? '');
    expect(Number(fast?.modelOptions?.tokens_per_second ?? 0)).toBeGreaterThan(Number(sonnet?.modelOptions?.tokens_per_second ?? 0));
    expect(fast?.upstreamModel).toBe(sonnet?.upstreamModel);
  });

  it('returns fresh data on each call', () => {
    const a = localModels();
    a[0]?.aliases.push('mutated');
    expect(localModels()[0]?.aliases).not.toContain('mutated');
  });
});
