import { invalid } from '../../ir/errors.js';
import type { Fallbacks, Reasoning, ReasoningEffort } from '../../ir/request.js';
import { isRecord, type JsonObject } from './json.js';

/**
 * Gateway options both chat and messages accept with the same meaning: `thinking`,
 * `reasoning_effort` (alias `thinking_effort`), `fast` (alias `speed:"fast"`) and `fallbacks`.
 */
export interface GatewayOptions {
  reasoning: Reasoning;
  fast: boolean;
  fallbacks: Fallbacks;
  /** Raw values the IR cannot hold exactly (e.g. `reasoning_effort:"xhigh"`), for the Chat bag (Messages has no such field). */
  extras: { reasoning_effort?: string };
}

/** The request keys `decodeGatewayOptions` consumes. */
export const GATEWAY_OPTION_KEYS: readonly string[] = ['thinking', 'reasoning_effort', 'thinking_effort', 'fast', 'speed', 'fallbacks'];

export function decodeGatewayOptions(body: JsonObject): GatewayOptions {
  const extras: GatewayOptions['extras'] = {};
  const reasoning = decodeThinking(body.thinking);
  const effortKey = body.reasoning_effort != null ? 'reasoning_effort' : 'thinking_effort';
  const rawEffort = body[effortKey];
  if (rawEffort != null) {
    if (typeof rawEffort !== 'string') throw invalid(`${effortKey} must be a string`, effortKey);
    const effort = EFFORTS[rawEffort];
    if (effort === undefined) throw invalid(`${effortKey} must be one of low, medium, high (got "${rawEffort}")`, effortKey);
    if (effort === 'none') {
      reasoning.enabled = false;
    } else {
      reasoning.enabled = true;
      reasoning.effort = effort;
    }
    // Values the IR rounds (minimal -> low, xhigh -> high) travel raw for same-protocol upstreams.
    if (effort !== rawEffort && effort !== 'none') extras.reasoning_effort = rawEffort;
  }
  return { reasoning, fast: body.fast === true || body.speed === 'fast', fallbacks: decodeFallbacks(body.fallbacks), extras };
}

/** An effort level as the IR holds it (`minimal` -> low, `xhigh` and `max` -> high); undefined when unknown. */
export function effortOfLevel(level: unknown): ReasoningEffort | 'none' | undefined {
  return typeof level === 'string' && Object.hasOwn(EFFORTS, level) ? EFFORTS[level] : undefined;
}

const EFFORTS: Record<string, ReasoningEffort | 'none' | undefined> = {
  none: 'none',
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
};

/**
 * `thinking`: `true`/`false` or Anthropic's object. `display` and any field the IR has no home for
 * travel on to an Anthropic upstream unchanged; `between_tools` is adaptive thinking kept to the
 * turns between tool calls.
 */
export function decodeThinking(t: unknown): Reasoning {
  if (t === undefined || t === null || t === false) return { enabled: false };
  if (t === true) return { enabled: true };
  if (!isRecord(t)) throw invalid('thinking must be a boolean or an object', 'thinking');
  const { type, budget_tokens: budget, display, ...rest } = t;
  if (display !== undefined && display !== null && typeof display !== 'string') throw invalid('thinking.display must be a string', 'thinking.display');
  const kept: Partial<Reasoning> = { ...(typeof display === 'string' ? { display } : {}), ...(Object.keys(rest).length > 0 ? { extra: rest } : {}) };
  switch (type) {
    case 'enabled':
    case undefined: {
      if (budget !== undefined && (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1)) {
        throw invalid('thinking.budget_tokens must be a positive integer', 'thinking.budget_tokens');
      }
      return { enabled: true, ...(budget !== undefined ? { budgetTokens: budget } : {}), ...kept };
    }
    case 'disabled':
      return { enabled: false };
    case 'adaptive':
      return { enabled: true, adaptive: true, ...kept };
    case 'between_tools':
      return { enabled: true, adaptive: true, betweenTools: true, ...kept };
    default:
      throw invalid(`thinking.type must be enabled, disabled, adaptive or between_tools (got ${JSON.stringify(type)})`, 'thinking.type');
  }
}

/** `fallbacks`: omitted or "default" -> the catalog chain; an array of ids or `{model}` objects; `[]` none. */
export function decodeFallbacks(f: unknown): Fallbacks {
  if (f === undefined || f === null || f === 'default') return 'default';
  if (!Array.isArray(f)) throw invalid('fallbacks must be "default" or an array of model ids', 'fallbacks');
  return f.map((item, i) => {
    if (typeof item === 'string' && item !== '') return item;
    if (isRecord(item) && typeof item.model === 'string' && item.model !== '') return item.model;
    throw invalid('each fallback must be a model id or an object {model}', `fallbacks.${i}`);
  });
}
