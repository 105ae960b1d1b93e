import { describe, expect, it } from 'vitest';
import { effortForBudget, resolveReasoning } from './resolve-reasoning.js';

/** Anthropic's rule: budgets below 1024 are refused. */
const ANTHROPIC_MIN_BUDGET = 1024;

const anthropic = (maxTokens: number) => ({ maxTokens, modelReasons: true, minBudget: ANTHROPIC_MIN_BUDGET, modelId: 'm' });
const plain = (maxTokens: number) => ({ maxTokens, modelReasons: true, minBudget: 0, modelId: 'm' });

describe('resolveReasoning', () => {
  it('maps every effort to its budget, capped below max_tokens', () => {
    expect(resolveReasoning({ enabled: true, effort: 'low' }, anthropic(20_000)).reasoning.budgetTokens).toBe(1024);
    expect(resolveReasoning({ enabled: true, effort: 'medium' }, anthropic(20_000)).reasoning.budgetTokens).toBe(4096);
    expect(resolveReasoning({ enabled: true, effort: 'high' }, anthropic(20_000)).reasoning.budgetTokens).toBe(16_384);
    expect(resolveReasoning({ enabled: true, effort: 'high' }, anthropic(2000)).reasoning.budgetTokens).toBe(1999);
    expect(resolveReasoning({ enabled: true }, anthropic(20_000)).reasoning).toMatchObject({ effort: 'medium', budgetTokens: 4096 });
  });

  it('raises a budget to the provider minimum, or turns thinking off with a warning when it cannot fit', () => {
    expect(resolveReasoning({ enabled: true, budgetTokens: 500 }, anthropic(4000)).reasoning.budgetTokens).toBe(1024);
    const off = resolveReasoning({ enabled: true, effort: 'low' }, anthropic(1024));
    expect(off.reasoning.enabled).toBe(false);
    expect(off.warning).toMatch(/thinking turned off/);
    expect(resolveReasoning({ enabled: true, effort: 'low' }, plain(500)).reasoning).toMatchObject({ enabled: true, budgetTokens: 499 });
  });

  it('maps a budget to an effort and gives a non-reasoning model none', () => {
    expect([1, 2047, 2048, 8191, 8192].map(effortForBudget)).toEqual(['low', 'low', 'medium', 'medium', 'high']);
    expect(resolveReasoning({ enabled: true, budgetTokens: 3000 }, plain(8000)).reasoning.effort).toBe('medium');
    const none = resolveReasoning({ enabled: true, effort: 'high' }, { ...plain(8000), modelReasons: false });
    expect(none.reasoning.enabled).toBe(false);
    expect(none.warning).toMatch(/reasoning ignored: .* does not reason/);
    expect(resolveReasoning({ enabled: false }, { ...plain(8000), modelReasons: false }).warning).toBeUndefined();
  });

  it('turns thinking off with a warning where the provider cannot think while a tool is forced', () => {
    const forced = resolveReasoning({ enabled: true, effort: 'high' }, { ...anthropic(20_000), forcedToolBlocksThinking: true });
    expect(forced.reasoning.enabled).toBe(false);
    expect(forced.warning).toMatch(/tool call is forced/);
    expect(resolveReasoning({ enabled: true, effort: 'high' }, { ...anthropic(20_000), forcedToolBlocksThinking: false }).reasoning.enabled).toBe(true);
  });
});
