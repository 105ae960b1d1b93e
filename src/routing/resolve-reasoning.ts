import type { Reasoning, ReasoningEffort } from '../ir/index.js';

/**
 * Effort <-> budget, one documented rule (spec/DECISIONS.md):
 *   effort -> budget: low 1024, medium 4096, high 16384, capped at maxTokens - 1 so the budget
 *   always fits under the ceiling (Anthropic requires budget < max_tokens);
 *   budget -> effort: < 2048 low, < 8192 medium, else high.
 * Thinking turned on with neither means medium. A model without reasoning gets none, and a
 * warning says so (the catalog's `capabilities.reasoning` defaults to false).
 * A provider with a minimum budget (its `capabilities.thinking.minBudget`) gets at least that; when the ceiling leaves
 * no room for it (max_tokens <= 1024), thinking is turned off and a warning says so.
 */
export const EFFORT_BUDGET: Record<ReasoningEffort, number> = { low: 1024, medium: 4096, high: 16384 };

export function effortForBudget(budget: number): ReasoningEffort {
  if (budget < 2048) return 'low';
  if (budget < 8192) return 'medium';
  return 'high';
}

export interface ResolvedReasoning {
  reasoning: Reasoning;
  /** Set when the gateway changed what the client asked for in a way it should know about. */
  warning?: string;
}

export interface ReasoningTarget {
  maxTokens: number;
  modelReasons: boolean;
  /** The provider's smallest accepted budget (0: none). */
  minBudget: number;
  modelId: string;
  /**
   * True when the provider cannot think while a tool is forced (Anthropic rejects thinking with
   * `tool_choice` any/tool) and the request forces one: the tool choice wins, thinking goes off.
   */
  forcedToolBlocksThinking?: boolean;
}

const OFF = (r: Reasoning): Reasoning => ({ ...r, enabled: false, effort: undefined, budgetTokens: undefined });

export function resolveReasoning(r: Reasoning, t: ReasoningTarget): ResolvedReasoning {
  if (!r.enabled) return { reasoning: OFF(r) };
  if (!t.modelReasons) return { reasoning: OFF(r), warning: `reasoning ignored: ${t.modelId} does not reason (capabilities.reasoning in the catalog)` };
  if (t.forcedToolBlocksThinking) {
    return { reasoning: OFF(r), warning: `thinking turned off for ${t.modelId}: it cannot think while a tool call is forced (tool_choice)` };
  }
  const effort = r.effort ?? (r.budgetTokens !== undefined ? effortForBudget(r.budgetTokens) : 'medium');
  const wanted = r.budgetTokens ?? EFFORT_BUDGET[effort];
  const ceiling = t.maxTokens - 1;
  if (t.minBudget > 0 && ceiling < t.minBudget) {
    return {
      reasoning: OFF(r),
      warning: `thinking turned off for ${t.modelId}: max_tokens ${t.maxTokens} leaves no room for its minimum thinking budget of ${t.minBudget} tokens (budget_tokens must be below max_tokens)`,
    };
  }
  const budget = Math.max(t.minBudget, Math.min(wanted, ceiling));
  return { reasoning: { ...r, enabled: true, effort, budgetTokens: Math.max(0, budget) } };
}
