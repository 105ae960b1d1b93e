import { GatewayError, emptyUsage, type Finish, type ReasoningOrigin, type UpstreamEvent, type Usage } from '../../ir/index.js';
import { isObject, num, str } from '../shared/read-json.js';
import { OPENAI_KIND } from './api.js';

/**
 * Chat `finish_reason` -> IR finish. A streamed or returned `refusal` turns any reason into a
 * refusal; its text is the refusal's explanation (like Anthropic's `stop_details`), not answer
 * text, so a refusal before any output can fall back without the client seeing it.
 */
export function decodeFinish(raw: string | undefined, refusal: string | undefined): Finish {
  if (refusal !== undefined) {
    return { unified: 'refusal', ...(raw ? { raw } : {}), details: { type: 'refusal', category: null, explanation: refusal } };
  }
  switch (raw) {
    case 'stop':
      return { unified: 'stop', raw };
    case 'length':
      return { unified: 'length', raw };
    case 'tool_calls':
    case 'function_call':
      return { unified: 'tool-calls', raw };
    case 'content_filter':
      return { unified: 'refusal', raw };
    default:
      return { unified: 'other', ...(raw ? { raw } : {}) };
  }
}

/** DeepSeek-style `reasoning_content` is bound to OpenAI-compatible chat upstreams (it is echoed only there). */
export function reasoningOrigin(model: string | undefined): ReasoningOrigin {
  return model ? { provider: OPENAI_KIND, model } : { provider: OPENAI_KIND };
}

/**
 * Chat usage -> IR usage. `prompt_tokens` includes cached tokens (OpenAI `cached_tokens`,
 * DeepSeek `prompt_cache_hit_tokens`); the IR keeps the uncached share apart, and the audio and
 * image tokens among it and among the completion (`audio_tokens`, `image_tokens`), priced apart
 * where a price says so. `serviceTier` is the completion's (or chunk's) `service_tier`: the tier
 * that served, which may differ from the one asked for.
 */
export function decodeUsage(u: unknown, serviceTier?: unknown): Usage {
  const usage = emptyUsage();
  if (typeof serviceTier === 'string' && serviceTier) usage.serviceTier = serviceTier;
  if (!isObject(u)) return usage;
  const prompt = num(u.prompt_tokens);
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cached = num(details.cached_tokens) || num(u.prompt_cache_hit_tokens);
  usage.input.cacheRead = cached;
  usage.input.noCache = Math.max(0, prompt - cached);
  usage.output.total = num(u.completion_tokens);
  const out = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  usage.output.reasoning = num(out.reasoning_tokens);
  // Cached audio is a cache read like any other: the modality counts are shares of the uncached input.
  const audioIn = Math.min(num(details.audio_tokens), usage.input.noCache);
  const imageIn = Math.min(num(details.image_tokens), usage.input.noCache - audioIn);
  if (audioIn) usage.input.audio = audioIn;
  if (imageIn) usage.input.image = imageIn;
  if (num(out.audio_tokens)) usage.output.audio = num(out.audio_tokens);
  if (num(out.image_tokens)) usage.output.image = num(out.image_tokens);
  return usage;
}

/** A non-streamed chat completion -> the IR events a stream of it would have produced. */
export function decodeResponse(body: unknown): UpstreamEvent[] {
  if (!isObject(body)) throw new GatewayError('bad_gateway', 'upstream sent a chat completion that is not an object');
  if (body.error !== undefined) throw new GatewayError('bad_gateway', 'upstream sent an error object with a success status');
  const choices = Array.isArray(body.choices) ? body.choices : [];
  const choice = choices.find((c) => isObject(c) && (c.index ?? 0) === 0);
  if (!isObject(choice) || !isObject(choice.message)) {
    throw new GatewayError('bad_gateway', 'upstream chat completion has no choice 0');
  }
  const msg = choice.message;
  const out: UpstreamEvent[] = [{ type: 'start', id: str(body.id), model: str(body.model) }];
  let n = 0;
  if (typeof msg.reasoning_content === 'string' && msg.reasoning_content) {
    const id = String(n++);
    out.push({ type: 'reasoning-start', id, origin: reasoningOrigin(str(body.model) || undefined) }, { type: 'reasoning-delta', id, text: msg.reasoning_content }, { type: 'reasoning-end', id });
  }
  const refusal = typeof msg.refusal === 'string' && msg.refusal ? msg.refusal : undefined;
  const text = typeof msg.content === 'string' && msg.content ? msg.content : undefined;
  if (text) {
    const id = String(n++);
    out.push({ type: 'text-start', id }, { type: 'text-delta', id, text }, { type: 'text-end', id });
  }
  for (const call of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    const id = String(n++);
    out.push({ type: 'tool-start', id, toolCallId: str(call.id), name: str(call.function.name) });
    const args = str(call.function.arguments);
    if (args) out.push({ type: 'tool-delta', id, json: args });
    out.push({ type: 'tool-end', id });
  }
  const raw = typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined;
  out.push({ type: 'finish', finish: decodeFinish(raw, refusal), usage: decodeUsage(body.usage, body.service_tier) });
  return out;
}
