import { emptyUsage, THINKING_FAMILY, type Finish, type ReasoningOrigin, type Usage } from '../../ir/index.js';
import { isObject, num, str, type Json } from '../shared/read-json.js';

/** What Converse answers say beside their content: why they stopped, the usage, whose reasoning. */

/** `stopReason` -> IR finish. A guardrail or content filter withheld the answer: a refusal. */
export function decodeStopReason(raw: string): Finish {
  switch (raw) {
    case 'end_turn':
      return { unified: 'stop', raw };
    case 'tool_use':
      return { unified: 'tool-calls', raw };
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { unified: 'length', raw };
    case 'stop_sequence':
      return { unified: 'stop-sequence', raw };
    case 'guardrail_intervened':
    case 'content_filtered':
      return { unified: 'refusal', raw };
    default:
      return { unified: 'other', ...(raw ? { raw } : {}) };
  }
}

/**
 * Converse `usage` -> IR usage: `inputTokens` is the uncached remainder, beside
 * `cacheReadInputTokens` / `cacheWriteInputTokens` (older answers spell them `...Count`), with the
 * writes by lifetime in `cacheDetails` (`[{ttl: "1h" | "5m", inputTokens}]`). `serviceTier` is
 * the answer's (or the stream's metadata event's) `{type}`: the tier that served.
 */
export function decodeConverseUsage(u: unknown, serviceTier?: unknown): Usage {
  const usage = emptyUsage();
  if (isObject(serviceTier) && typeof serviceTier.type === 'string') usage.serviceTier = serviceTier.type;
  if (!isObject(u)) return usage;
  usage.input.noCache = num(u.inputTokens);
  usage.input.cacheRead = num(u.cacheReadInputTokens ?? u.cacheReadInputTokenCount);
  usage.input.cacheWrite = num(u.cacheWriteInputTokens ?? u.cacheWriteInputTokenCount);
  if (Array.isArray(u.cacheDetails)) {
    const oneHour = u.cacheDetails.filter((d) => isObject(d) && d.ttl === '1h').reduce((sum: number, d) => sum + num((d as Json).inputTokens), 0);
    if (oneHour > 0) usage.input.cacheWrite1h = Math.min(oneHour, usage.input.cacheWrite);
  }
  usage.output.total = num(u.outputTokens);
  return usage;
}

/** Claude's reasoning over Converse carries Anthropic's signatures: the same family as InvokeModel's. */
export function converseOrigin(model: string): ReasoningOrigin {
  return { provider: THINKING_FAMILY, ...(model ? { model } : {}) };
}

/** `redactedContent` is bytes (base64 in JSON) holding Anthropic's redacted `data` text. */
export function redactedData(v: unknown): string {
  return Buffer.from(str(v), 'base64').toString('utf8');
}

export type { Json };
