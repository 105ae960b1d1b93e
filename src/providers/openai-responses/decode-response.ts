import { GatewayError, emptyUsage, namespacedToolName, type Finish, type UpstreamEvent, type Usage } from '../../ir/index.js';
import { isObject, num, str, type Json } from '../shared/read-json.js';
import { reasoningOrigin } from './api.js';
import { decodeStreamError } from './decode-error.js';

/**
 * A Response's status into the IR finish: `incomplete` says why (the ceiling or the content
 * filter); a completed response that called a function ends in tool calls.
 */
export function decodeFinish(response: Json, sawToolCall: boolean, refused: boolean): Finish {
  const status = str(response.status);
  const reason = isObject(response.incomplete_details) ? str(response.incomplete_details.reason) : '';
  if (status === 'incomplete') {
    if (reason === 'max_output_tokens') return { unified: 'length', raw: reason };
    if (reason === 'content_filter') return { unified: 'refusal', raw: reason };
    return { unified: 'other', raw: reason || status };
  }
  if (refused) return { unified: 'refusal', raw: 'refusal' };
  if (sawToolCall) return { unified: 'tool-calls', raw: status || 'completed' };
  return { unified: 'stop', raw: status || 'completed' };
}

/**
 * Responses usage: `input_tokens` includes `cached_tokens`; `output_tokens` includes reasoning.
 * From the response around it: the `service_tier` that served, and the hosted web searches it
 * ran (its `web_search_call` output items), billed per call.
 */
export function decodeUsage(u: unknown, response?: unknown): Usage {
  const usage = emptyUsage();
  if (isObject(response)) {
    if (typeof response.service_tier === 'string' && response.service_tier) usage.serviceTier = response.service_tier;
    const searches = (Array.isArray(response.output) ? response.output : []).filter((i) => isObject(i) && i.type === 'web_search_call').length;
    if (searches) usage.serverTools = { web_search: searches };
  }
  if (!isObject(u)) return usage;
  const details = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  const cached = num(details.cached_tokens);
  usage.input.cacheRead = cached;
  usage.input.noCache = Math.max(0, num(u.input_tokens) - cached);
  usage.output.total = num(u.output_tokens);
  const out = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  usage.output.reasoning = num(out.reasoning_tokens);
  return usage;
}

/** A non-streamed Response -> the IR events a stream of it would have produced. */
export function decodeResponse(body: unknown): UpstreamEvent[] {
  if (!isObject(body)) throw new GatewayError('bad_gateway', 'upstream sent a Response that is not an object');
  if (body.status === 'failed') throw decodeStreamError({ response: body });
  if (isObject(body.error)) throw decodeStreamError(body);
  const out: UpstreamEvent[] = [{ type: 'start', id: str(body.id), model: str(body.model) }];
  let n = 0;
  let sawToolCall = false;
  let refused = false;
  for (const item of Array.isArray(body.output) ? body.output : []) {
    if (!isObject(item)) continue;
    const id = String(n++);
    if (item.type === 'reasoning') {
      const summary = (Array.isArray(item.summary) ? item.summary : []).map((p) => (isObject(p) ? str(p.text) : '')).filter(Boolean);
      out.push({ type: 'reasoning-start', id, origin: reasoningOrigin(str(body.model)) });
      if (summary.length) out.push({ type: 'reasoning-delta', id, text: summary.join('\n\n') });
      if (str(item.encrypted_content)) out.push({ type: 'reasoning-signature', id, signature: str(item.encrypted_content) });
      out.push({ type: 'reasoning-end', id });
    } else if (item.type === 'message') {
      const parts = Array.isArray(item.content) ? item.content.filter(isObject) : [];
      if (parts.some((p) => p.type === 'refusal')) refused = true;
      const text = parts.map((p) => (p.type === 'refusal' ? str(p.refusal) : str(p.text))).join('');
      out.push({ type: 'text-start', id }, ...(text ? [{ type: 'text-delta' as const, id, text }] : []), { type: 'text-end', id });
    } else if (item.type === 'function_call') {
      sawToolCall = true;
      out.push({ type: 'tool-start', id, toolCallId: str(item.call_id), name: callName(item) });
      if (str(item.arguments)) out.push({ type: 'tool-delta', id, json: str(item.arguments) });
      out.push({ type: 'tool-end', id });
    }
  }
  out.push({ type: 'finish', finish: decodeFinish(body, sawToolCall, refused), usage: decodeUsage(body.usage, body) });
  return out;
}

/** A call to a function in a namespace tool is named as the IR names the tool: `<namespace>__<name>`. */
function callName(item: Json): string {
  return typeof item.namespace === 'string' && item.namespace !== '' ? namespacedToolName(item.namespace, str(item.name)) : str(item.name);
}
