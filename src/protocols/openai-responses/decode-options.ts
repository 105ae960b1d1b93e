import { invalid, type Reasoning, type ReasoningEffort } from '../../ir/index.js';
import { decodeThinking } from '../shared/decode-options.js';
import { isRecord } from '../shared/json.js';

type Json = Record<string, unknown>;

/**
 * An effort string into the IR. `none` disables reasoning, `minimal` rounds up to `low` and
 * `xhigh` down to `high`; the raw value is returned too so that a Responses upstream and the
 * echoed `reasoning.effort` keep what the client sent.
 */
function parseEffort(v: unknown, param: string): { enabled: boolean; effort?: ReasoningEffort; raw: string } {
  switch (v) {
    case 'none':
      return { enabled: false, raw: v };
    case 'minimal':
      return { enabled: true, effort: 'low', raw: v };
    case 'low':
    case 'medium':
    case 'high':
      return { enabled: true, effort: v, raw: v };
    case 'xhigh':
      return { enabled: true, effort: 'high', raw: v };
    default:
      throw invalid(`unsupported reasoning effort: ${JSON.stringify(v)} (none, minimal, low, medium, high)`, param);
  }
}

export interface DecodedReasoning {
  reasoning: Reasoning;
  /** The effort exactly as the client wrote it, when it was written. */
  rawEffort?: string;
}

/**
 * Responses `reasoning: {effort, summary}` plus the gateway's own fields, in rising precedence:
 * `reasoning`, then `reasoning_effort` / `thinking_effort`, then `thinking` (an explicit
 * `thinking: {type: "disabled"}` wins over everything).
 */
export function decodeReasoning(body: Json): DecodedReasoning {
  const r: Reasoning = { enabled: false };
  let rawEffort: string | undefined;
  const applyEffort = (v: unknown, param: string) => {
    const e = parseEffort(v, param);
    r.enabled = e.enabled;
    r.effort = e.effort;
    rawEffort = e.raw;
  };
  const reasoning = body.reasoning;
  if (isRecord(reasoning)) {
    // A reasoning object asks for reasoning; its effort may still turn it off.
    r.enabled = true;
    if (reasoning.effort !== undefined && reasoning.effort !== null) applyEffort(reasoning.effort, 'reasoning.effort');
    const summary = reasoning.summary ?? reasoning.generate_summary;
    if (typeof summary === 'string') {
      // OpenAI's values only: anything else would be echoed in the response's `reasoning.summary`.
      if (!['auto', 'concise', 'detailed'].includes(summary)) throw invalid('reasoning.summary must be auto, concise or detailed', 'reasoning.summary');
      r.summary = summary;
    }
  } else if (reasoning !== undefined && reasoning !== null) {
    throw invalid('reasoning must be an object', 'reasoning');
  }
  for (const k of ['reasoning_effort', 'thinking_effort']) {
    if (body[k] !== undefined && body[k] !== null) applyEffort(body[k], k);
  }
  applyThinking(r, body.thinking);
  if (!r.enabled) delete r.effort;
  return { reasoning: r, ...(rawEffort !== undefined ? { rawEffort } : {}) };
}

function applyThinking(r: Reasoning, t: unknown): void {
  if (t === undefined || t === null) return;
  Object.assign(r, decodeThinking(t));
}

/** `fast: true` or `speed: "fast"`. */
export function decodeFast(body: Json): boolean {
  if (body.fast !== undefined && body.fast !== null && typeof body.fast !== 'boolean') {
    throw invalid('fast must be a boolean', 'fast');
  }
  if (body.speed !== undefined && body.speed !== null && typeof body.speed !== 'string') {
    throw invalid('speed must be a string', 'speed');
  }
  return body.fast === true || body.speed === 'fast';
}

