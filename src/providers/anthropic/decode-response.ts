import { GatewayError, THINKING_FAMILY, emptyUsage, type Citation, type Finish, type ReasoningOrigin, type UpstreamEvent, type Usage } from '../../ir/index.js';
import { isObject, str, type Json } from '../shared/read-json.js';

/** `stop_reason` (+ `stop_sequence`, `stop_details`) -> IR finish. */
export function decodeFinish(raw: string | undefined, stopSequence?: unknown, stopDetails?: unknown): Finish {
  const base = raw ? { raw } : {};
  switch (raw) {
    case 'end_turn':
      return { unified: 'stop', ...base };
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { unified: 'length', ...base };
    case 'tool_use':
      return { unified: 'tool-calls', ...base };
    case 'stop_sequence':
      return { unified: 'stop-sequence', ...base, ...(typeof stopSequence === 'string' ? { stopSequence } : {}) };
    case 'refusal':
      return { unified: 'refusal', ...base, ...(isObject(stopDetails) ? { details: stopDetails } : {}) };
    case 'pause_turn':
      return { unified: 'pause', ...base };
    default:
      return { unified: 'other', ...base };
  }
}

/** Thinking from this provider is bound to Anthropic (and the model): its signature goes back only there. */
export function reasoningOrigin(model: string | undefined): ReasoningOrigin {
  return model ? { provider: THINKING_FAMILY, model } : { provider: THINKING_FAMILY };
}

/**
 * Merge the usage fields present in `u` into `into` (message_delta repeats only some): tokens,
 * the cache writes by lifetime (`cache_creation.ephemeral_1h_input_tokens`), server-tool uses
 * (`server_tool_use.web_search_requests`, billed per use) and the `service_tier` that served.
 */
export function mergeUsage(into: Usage, u: unknown): Usage {
  if (!isObject(u)) return into;
  const next: Usage = { ...into, input: { ...into.input }, output: { ...into.output } };
  if (typeof u.input_tokens === 'number') next.input.noCache = u.input_tokens;
  if (typeof u.cache_read_input_tokens === 'number') next.input.cacheRead = u.cache_read_input_tokens;
  if (typeof u.cache_creation_input_tokens === 'number') next.input.cacheWrite = u.cache_creation_input_tokens;
  if (isObject(u.cache_creation) && typeof u.cache_creation.ephemeral_1h_input_tokens === 'number') {
    next.input.cacheWrite1h = u.cache_creation.ephemeral_1h_input_tokens;
    // Some answers give only the split: the total is its sum.
    if (typeof u.cache_creation_input_tokens !== 'number' && typeof u.cache_creation.ephemeral_5m_input_tokens === 'number') {
      next.input.cacheWrite = u.cache_creation.ephemeral_5m_input_tokens + u.cache_creation.ephemeral_1h_input_tokens;
    }
  }
  if (typeof u.output_tokens === 'number') next.output.total = u.output_tokens;
  if (isObject(u.server_tool_use)) {
    const tools: Record<string, number> = { ...next.serverTools };
    for (const [key, n] of Object.entries(u.server_tool_use)) {
      const m = /^(.+)_requests$/.exec(key);
      if (m && typeof n === 'number' && n > 0) tools[m[1]] = n;
    }
    if (Object.keys(tools).length) next.serverTools = tools;
  }
  if (typeof u.service_tier === 'string') next.serviceTier = u.service_tier;
  return next;
}

/** A non-streamed Message -> the IR events a stream of it would have produced. */
export function decodeResponse(body: unknown): UpstreamEvent[] {
  if (!isObject(body) || body.type === 'error') {
    throw new GatewayError('bad_gateway', 'upstream sent an unusable message body');
  }
  const usage = mergeUsage(emptyUsage(), body.usage);
  const out: UpstreamEvent[] = [
    { type: 'start', id: str(body.id), model: str(body.model), usage: { input: usage.input, output: { total: 0, reasoning: 0 } } },
  ];
  const content = Array.isArray(body.content) ? body.content : [];
  content.forEach((block, i) => {
    if (isObject(block)) out.push(...decodeBlock(block, String(i), reasoningOrigin(str(body.model) || undefined)));
  });
  out.push({ type: 'finish', finish: decodeFinish(str(body.stop_reason) || undefined, body.stop_sequence, body.stop_details), usage });
  return out;
}

function decodeBlock(b: Json, id: string, origin: ReasoningOrigin): UpstreamEvent[] {
  switch (b.type) {
    case 'text':
      return [
        { type: 'text-start', id },
        ...(str(b.text) ? [{ type: 'text-delta' as const, id, text: str(b.text) }] : []),
        ...citationsOf(b.citations).map((citation) => ({ type: 'citation' as const, id, citation })),
        { type: 'text-end', id },
      ];
    case 'thinking':
      return [
        { type: 'reasoning-start', id, origin },
        ...(str(b.thinking) ? [{ type: 'reasoning-delta' as const, id, text: str(b.thinking) }] : []),
        ...(str(b.signature) ? [{ type: 'reasoning-signature' as const, id, signature: str(b.signature) }] : []),
        { type: 'reasoning-end', id },
      ];
    case 'redacted_thinking':
      return [{ type: 'reasoning-start', id, redacted: str(b.data), origin }, { type: 'reasoning-end', id }];
    case 'tool_use':
    case 'server_tool_use': {
      const input = isObject(b.input) ? JSON.stringify(b.input) : '{}';
      const server = b.type === 'server_tool_use' ? { server: true } : {};
      return [{ type: 'tool-start', id, toolCallId: str(b.id), name: str(b.name), ...server }, { type: 'tool-delta', id, json: input }, { type: 'tool-end', id }];
    }
    default: {
      const result = serverToolResult(b, id);
      return result ? [result] : [];
    }
  }
}

/**
 * A server tool's result block (`web_search_tool_result`, `web_fetch_tool_result`,
 * `code_execution_tool_result`, ...: every `*_tool_result` but the client's `tool_result`), whole.
 */
export function serverToolResult(b: Json, id: string): UpstreamEvent | undefined {
  const kind = str(b.type);
  if (!kind.endsWith('_tool_result') || kind === 'tool_result') return undefined;
  return { type: 'server-tool-result', id, toolCallId: str(b.tool_use_id), kind, content: b.content };
}

/** A text block's citations (absent or null: none). */
export function citationsOf(v: unknown): Citation[] {
  return Array.isArray(v) ? v.filter((c): c is Citation => isObject(c) && typeof c.type === 'string') : [];
}
