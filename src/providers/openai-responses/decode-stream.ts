import { GatewayError, namespacedToolName, type UpstreamEvent, type StreamTranslator } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';
import { parseEventJson } from '../transport/parse-event-json.js';
import { reasoningOrigin } from './api.js';
import { decodeStreamError } from './decode-error.js';
import { decodeFinish, decodeUsage } from './decode-response.js';
import { type Json, isObject, str } from '../shared/read-json.js';

interface OpenItem {
  kind: 'text' | 'reasoning' | 'tool';
  /** IR block id (text: of the current content part). */
  id?: string;
  /** Tool: argument text seen so far; reasoning: summary parts seen. */
  seen: number;
}

export interface ResponsesStreamState {
  started: boolean;
  nextId: number;
  /** Open output items by `output_index`. */
  items: Record<number, OpenItem>;
  sawToolCall: boolean;
  refused: boolean;
  done: boolean;
  /** The upstream model from response.created, stamped on reasoning origins. */
  model: string;
}

export function initResponsesStream(): ResponsesStreamState {
  return { started: false, nextId: 0, items: {}, sawToolCall: false, refused: false, done: false, model: '' };
}

/**
 * Responses stream events -> IR events. Each output item is one IR block (a message item's content
 * parts each one text block); a reasoning item's several summary parts are one block joined by a
 * blank line, and its final `encrypted_content` (it changes between `added` and `done`) becomes
 * the block's signature. Hosted tool items have no IR home and are skipped.
 */
export const decodeResponsesStream: StreamTranslator<ResponsesStreamState, SseEvent, UpstreamEvent> = {
  step(prev, sse) {
    if (prev.done) return [prev, []];
    const ev = parseEventJson(sse.data);
    const type = typeof ev.type === 'string' ? ev.type : sse.event;
    if (type === 'error' || type === 'response.failed') throw decodeStreamError(ev);
    const s: ResponsesStreamState = { ...prev, items: { ...prev.items } };
    const out: UpstreamEvent[] = [];
    if (!s.started && type === 'response.created') {
      s.started = true;
      const r = isObject(ev.response) ? ev.response : {};
      s.model = str(r.model);
      out.push({ type: 'start', id: str(r.id), model: str(r.model) });
      return [s, out];
    }
    if (!s.started) throw new GatewayError('bad_gateway', `upstream Responses stream began with ${String(type)}, not response.created`, { retryable: true });
    onEvent(s, String(type), ev, out);
    return [s, out];
  },
};

function onEvent(s: ResponsesStreamState, type: string, ev: Json, out: UpstreamEvent[]): void {
  const index = typeof ev.output_index === 'number' ? ev.output_index : -1;
  // Copy-on-write: the state handed in stays as it was (the reducer is pure).
  const item = s.items[index] ? (s.items[index] = { ...s.items[index] }) : undefined;
  switch (type) {
    case 'response.output_item.added':
      return openItem(s, index, isObject(ev.item) ? ev.item : {}, out);
    case 'response.content_part.added':
      if (item?.kind === 'text') item.id = open(s, out, 'text-start');
      return;
    case 'response.output_text.delta':
    case 'response.refusal.delta':
      if (type === 'response.refusal.delta') s.refused = true;
      if (item?.kind === 'text' && item.id === undefined) item.id = open(s, out, 'text-start');
      if (item?.id !== undefined && str(ev.delta)) out.push({ type: 'text-delta', id: item.id, text: str(ev.delta) });
      return;
    case 'response.content_part.done':
      if (item?.kind === 'text' && item.id !== undefined) {
        out.push({ type: 'text-end', id: item.id });
        item.id = undefined;
      }
      return;
    case 'response.reasoning_summary_part.added':
      if (item?.kind === 'reasoning' && item.seen++ > 0) out.push({ type: 'reasoning-delta', id: item.id!, text: '\n\n' });
      return;
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      if (item?.kind === 'reasoning' && str(ev.delta)) out.push({ type: 'reasoning-delta', id: item.id!, text: str(ev.delta) });
      return;
    case 'response.function_call_arguments.delta':
      if (item?.kind === 'tool' && str(ev.delta)) {
        item.seen += str(ev.delta).length;
        out.push({ type: 'tool-delta', id: item.id!, json: str(ev.delta) });
      }
      return;
    case 'response.output_item.done':
      return closeItem(s, index, isObject(ev.item) ? ev.item : {}, out);
    case 'response.completed':
    case 'response.incomplete':
      return finish(s, isObject(ev.response) ? ev.response : {}, out);
    // Other events (in_progress, *.done duplicates, annotations, hosted tool progress) add nothing.
  }
}

function open(s: ResponsesStreamState, out: UpstreamEvent[], type: 'text-start'): string {
  const id = String(s.nextId++);
  out.push({ type, id });
  return id;
}

function openItem(s: ResponsesStreamState, index: number, item: Json, out: UpstreamEvent[]): void {
  if (item.type === 'message') {
    s.items[index] = { kind: 'text', seen: 0 };
  } else if (item.type === 'reasoning') {
    const id = String(s.nextId++);
    s.items[index] = { kind: 'reasoning', id, seen: 0 };
    out.push({ type: 'reasoning-start', id, origin: reasoningOrigin(s.model) });
  } else if (item.type === 'function_call') {
    const id = String(s.nextId++);
    s.items[index] = { kind: 'tool', id, seen: 0 };
    s.sawToolCall = true;
    out.push({ type: 'tool-start', id, toolCallId: str(item.call_id), name: callName(item) });
  }
}

function closeItem(s: ResponsesStreamState, index: number, item: Json, out: UpstreamEvent[]): void {
  const open = s.items[index];
  if (!open) return;
  delete s.items[index];
  if (open.kind === 'text') {
    if (open.id !== undefined) out.push({ type: 'text-end', id: open.id });
    return;
  }
  const id = open.id!;
  if (open.kind === 'reasoning') {
    // The final encrypted_content is the one that decrypts; the one in `added` is provisional.
    if (str(item.encrypted_content)) out.push({ type: 'reasoning-signature', id, signature: str(item.encrypted_content) });
    out.push({ type: 'reasoning-end', id });
    return;
  }
  // An upstream that sent the arguments only whole (no deltas) still gets them through.
  if (open.seen === 0 && str(item.arguments)) out.push({ type: 'tool-delta', id, json: str(item.arguments) });
  out.push({ type: 'tool-end', id });
}

function finish(s: ResponsesStreamState, response: Json, out: UpstreamEvent[]): void {
  for (const key of Object.keys(s.items)) closeItem(s, Number(key), {}, out);
  s.done = true;
  out.push({ type: 'finish', finish: decodeFinish(response, s.sawToolCall, s.refused), usage: decodeUsage(response.usage, response) });
}


/** A call to a function in a namespace tool is named as the IR names the tool: `<namespace>__<name>`. */
function callName(item: Json): string {
  return typeof item.namespace === 'string' && item.namespace !== '' ? namespacedToolName(item.namespace, str(item.name)) : str(item.name);
}
