import { GatewayError, emptyUsage, type UpstreamEvent, type StreamTranslator, type Usage } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';
import { parseEventJson } from '../transport/parse-event-json.js';
import { decodeStreamError } from './decode-error.js';
import { decodeFinish, decodeUsage, reasoningOrigin } from './decode-response.js';
import { type Json, isObject, str } from '../shared/read-json.js';

interface ToolSlot {
  /** IR block id, set when the block starts. */
  id?: string;
  callId: string;
  name: string;
  /** Argument fragments seen before the name arrived. */
  pending: string;
  closed: boolean;
}

export interface ChatStreamState {
  started: boolean;
  nextId: number;
  /** The open text or reasoning block (they never interleave). */
  current?: { kind: 'text' | 'reasoning'; id: string };
  /** Tool calls by their `index` on the wire. */
  tools: Record<number, ToolSlot>;
  finishRaw?: string;
  /** Refusal text streamed so far (`delta.refusal`); undefined while the model has not refused. */
  refusal?: string;
  usage?: Usage;
  done: boolean;
  /** The upstream model from the first chunk, stamped on reasoning origins. */
  model?: string;
}

export function initChatStream(): ChatStreamState {
  return { started: false, nextId: 0, tools: {}, done: false };
}

/**
 * Chat completion chunks -> IR events. Only choice 0 is followed (n>1 streams). The finish is
 * emitted at `[DONE]` (or at the end of the body) so the trailing usage chunk is included.
 */
export const decodeChatStream: StreamTranslator<ChatStreamState, SseEvent, UpstreamEvent> = {
  step(prev, sse) {
    if (prev.done) return [prev, []];
    if (sse.data.trim() === '[DONE]') {
      if (prev.finishRaw === undefined) throw new GatewayError('bad_gateway', 'upstream stream ended early', { retryable: true });
      return finishStream(clone(prev));
    }
    const chunk = parseEventJson(sse.data);
    if (chunk.error !== undefined && chunk.error !== null) throw decodeStreamError(chunk);
    const s = clone(prev);
    const out: UpstreamEvent[] = [];
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const choice = choices.find((c): c is Json => isObject(c) && (c.index ?? 0) === 0);
    // Azure opens with an id-less, choice-less prompt-filter chunk: wait for a real one.
    if (!s.started && (choice || str(chunk.id) || str(chunk.model))) startStream(s, chunk, out);
    if (isObject(chunk.usage)) s.usage = decodeUsage(chunk.usage, chunk.service_tier);
    if (choice) stepChoice(s, choice, out);
    return [s, out];
  },
  end(state) {
    // No [DONE] (some servers just close), but the finish reason came: that is a complete stream.
    if (state.done || state.finishRaw === undefined) return [];
    return finishStream(clone(state))[1];
  },
};

function stepChoice(s: ChatStreamState, choice: Json, out: UpstreamEvent[]): void {
  const delta = isObject(choice.delta) ? choice.delta : {};
  const reasoning = str(delta.reasoning_content) || str(delta.reasoning);
  if (reasoning) emitFlat(s, 'reasoning', reasoning, out);
  const content = str(delta.content);
  if (content) emitFlat(s, 'text', content, out);
  const refusal = str(delta.refusal);
  if (refusal) {
    s.refusal = (s.refusal ?? '') + refusal;
  }
  if (Array.isArray(delta.tool_calls)) {
    delta.tool_calls.forEach((tc, position) => {
      if (isObject(tc)) stepToolCall(s, tc, position, out);
    });
  }
  if (typeof choice.finish_reason === 'string' && choice.finish_reason) {
    s.finishRaw = choice.finish_reason;
    closeAll(s, out);
  }
}

/** Text and reasoning deltas: open a block of that kind, closing the other one first. */
function emitFlat(s: ChatStreamState, kind: 'text' | 'reasoning', text: string, out: UpstreamEvent[]): void {
  if (s.current?.kind !== kind) {
    closeCurrent(s, out);
    const id = String(s.nextId++);
    s.current = { kind, id };
    out.push(kind === 'text' ? { type: 'text-start', id } : { type: 'reasoning-start', id, origin: reasoningOrigin(s.model) });
  }
  const id = s.current!.id;
  out.push(kind === 'text' ? { type: 'text-delta', id, text } : { type: 'reasoning-delta', id, text });
}

function stepToolCall(s: ChatStreamState, tc: Json, position: number, out: UpstreamEvent[]): void {
  const index = typeof tc.index === 'number' ? tc.index : position;
  const fn = isObject(tc.function) ? tc.function : {};
  const slot = (s.tools[index] ??= { callId: '', name: '', pending: '', closed: false });
  if (slot.closed) return;
  if (!slot.callId && str(tc.id)) slot.callId = str(tc.id);
  if (!slot.name && str(fn.name)) slot.name = str(fn.name);
  const args = str(fn.arguments);
  if (slot.id === undefined) {
    if (args) slot.pending += args;
    if (slot.name) openTool(s, slot, index, out);
    return;
  }
  if (args) out.push({ type: 'tool-delta', id: slot.id, json: args });
}

function openTool(s: ChatStreamState, slot: ToolSlot, index: number, out: UpstreamEvent[]): void {
  closeCurrent(s, out);
  slot.id = String(s.nextId++);
  out.push({ type: 'tool-start', id: slot.id, toolCallId: slot.callId || `call_${index}`, name: slot.name });
  if (slot.pending) out.push({ type: 'tool-delta', id: slot.id, json: slot.pending });
  slot.pending = '';
}

function closeCurrent(s: ChatStreamState, out: UpstreamEvent[]): void {
  if (!s.current) return;
  out.push({ type: s.current.kind === 'text' ? 'text-end' : 'reasoning-end', id: s.current.id });
  s.current = undefined;
}

function closeAll(s: ChatStreamState, out: UpstreamEvent[]): void {
  closeCurrent(s, out);
  for (const [key, slot] of Object.entries(s.tools)) {
    if (slot.closed) continue;
    if (slot.id === undefined) openTool(s, slot, Number(key), out);
    out.push({ type: 'tool-end', id: slot.id! });
    slot.closed = true;
  }
}

function startStream(s: ChatStreamState, chunk: Json, out: UpstreamEvent[]): void {
  s.started = true;
  s.model = str(chunk.model) || undefined;
  out.push({ type: 'start', id: str(chunk.id), model: str(chunk.model) });
}

function finishStream(s: ChatStreamState): [ChatStreamState, UpstreamEvent[]] {
  const out: UpstreamEvent[] = [];
  if (!s.started) startStream(s, {}, out);
  closeAll(s, out);
  s.done = true;
  out.push({ type: 'finish', finish: decodeFinish(s.finishRaw, s.refusal), usage: s.usage ?? emptyUsage() });
  return [s, out];
}

/** Copy-on-step keeps the reducer pure; the state is small. */
function clone(s: ChatStreamState): ChatStreamState {
  const tools: Record<number, ToolSlot> = {};
  for (const [k, v] of Object.entries(s.tools)) tools[Number(k)] = { ...v };
  return { ...s, tools, current: s.current && { ...s.current } };
}

