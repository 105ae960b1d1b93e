import type { Reasoning, ReasoningEffort } from '../ir/index.js';

/**
 * Effort <-> budget, one documented rule (spec/DECISIONS.md):
 *   effort -> budget: low 1024, medium 4096, high 16384, capped at maxTokens - 1 so the budget
 *   always fits under the ceiling (Anthropic requires budget < max_tokens);
 *   budget -> effort: < 2048 low, < 8192 medium, else high.
 * Thinking turned on with neither means medium. A model without reasoning gets none.
 */
export const EFFORT_BUDGET: Record<ReasoningEffort, number> = { low: 1024, medium: 4096, high: 16384 };

export function effortForBudget(budget: number): ReasoningEffort {
  if (budget < 2048) return 'low';
  if (budget < 8192) return 'medium';
  return 'high';
}

export function resolveReasoning(r: Reasoning, maxTokens: number, modelReasons: boolean): Reasoning {
  if (!r.enabled || !modelReasons) return { ...r, enabled: false, effort: undefined, budgetTokens: undefined };
  const effort = r.effort ?? (r.budgetTokens !== undefined ? effortForBudget(r.budgetTokens) : 'medium');
  const wanted = r.budgetTokens ?? EFFORT_BUDGET[effort];
  return { ...r, enabled: true, effort, budgetTokens: Math.max(0, Math.min(wanted, maxTokens - 1)) };
}
