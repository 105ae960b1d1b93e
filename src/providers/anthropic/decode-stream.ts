import { GatewayError, emptyUsage, type Citation, type Finish, type UpstreamEvent, type StreamTranslator, type Usage } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';
import { parseEventJson } from '../transport/parse-event-json.js';
import { decodeStreamError } from './decode-error.js';
import { citationsOf, decodeFinish, mergeUsage, reasoningOrigin, serverToolResult } from './decode-response.js';
import { type Json, isObject, str } from '../shared/read-json.js';

type BlockKind = 'text' | 'reasoning' | 'tool';

export interface MessagesStreamState {
  started: boolean;
  nextId: number;
  /** Open blocks by their wire `index`; a text block keeps its citations until it closes. */
  open: Record<number, { id: string; kind: BlockKind; citations?: Citation[] }>;
  usage: Usage;
  finish?: Finish;
  done: boolean;
  /** The upstream model from message_start, stamped on reasoning origins. */
  model?: string;
}

export function initMessagesStream(): MessagesStreamState {
  return { started: false, nextId: 0, open: {}, usage: emptyUsage(), done: false };
}

/**
 * Messages stream events -> IR events. `message_stop` closes whatever is still open: a stream cut
 * by max_tokens inside a tool_use never sends that block's `content_block_stop`.
 */
export const decodeMessagesStream: StreamTranslator<MessagesStreamState, SseEvent, UpstreamEvent> = {
  step(prev, sse) {
    if (prev.done) return [prev, []];
    const ev = parseEventJson(sse.data);
    const type = typeof ev.type === 'string' ? ev.type : sse.event;
    if (type === 'error') throw decodeStreamError(ev);
    if (type === 'ping' || type === undefined) return [prev, []];
    const s: MessagesStreamState = { ...prev, open: { ...prev.open } };
    const out: UpstreamEvent[] = [];
    switch (type) {
      case 'message_start':
        onMessageStart(s, isObject(ev.message) ? ev.message : {}, out);
        break;
      case 'content_block_start':
        onBlockStart(s, num(ev.index), isObject(ev.content_block) ? ev.content_block : {}, out);
        break;
      case 'content_block_delta':
        onBlockDelta(s, num(ev.index), isObject(ev.delta) ? ev.delta : {}, out);
        break;
      case 'content_block_stop':
        closeBlock(s, num(ev.index), out);
        break;
      case 'message_delta': {
        const d = isObject(ev.delta) ? ev.delta : {};
        if (typeof d.stop_reason === 'string') s.finish = decodeFinish(d.stop_reason, d.stop_sequence, d.stop_details);
        s.usage = mergeUsage(s.usage, ev.usage);
        break;
      }
      case 'message_stop':
        finishStream(s, out);
        break;
      // Unknown event types are ignored, as the API's versioning policy asks of clients.
    }
    return [s, out];
  },
  end(state) {
    if (state.done || state.finish === undefined) return [];
    const s: MessagesStreamState = { ...state, open: { ...state.open } };
    const out: UpstreamEvent[] = [];
    finishStream(s, out);
    return out;
  },
};

function onMessageStart(s: MessagesStreamState, message: Json, out: UpstreamEvent[]): void {
  if (s.started) return;
  s.started = true;
  s.model = str(message.model) || undefined;
  s.usage = mergeUsage(s.usage, message.usage);
  // message_start's output_tokens is a placeholder; the real count comes in message_delta.
  out.push({ type: 'start', id: str(message.id), model: str(message.model), usage: { input: { ...s.usage.input }, output: { total: 0, reasoning: 0 } } });
}

function onBlockStart(s: MessagesStreamState, index: number, block: Json, out: UpstreamEvent[]): void {
  const id = String(s.nextId++);
  switch (block.type) {
    case 'text': {
      const citations = citationsOf(block.citations);
      s.open[index] = { id, kind: 'text', ...(citations.length ? { citations } : {}) };
      out.push({ type: 'text-start', id });
      if (str(block.text)) out.push({ type: 'text-delta', id, text: str(block.text) });
      break;
    }
    case 'thinking':
      s.open[index] = { id, kind: 'reasoning' };
      out.push({ type: 'reasoning-start', id, origin: reasoningOrigin(s.model) });
      if (str(block.thinking)) out.push({ type: 'reasoning-delta', id, text: str(block.thinking) });
      if (str(block.signature)) out.push({ type: 'reasoning-signature', id, signature: str(block.signature) });
      break;
    case 'redacted_thinking':
      s.open[index] = { id, kind: 'reasoning' };
      out.push({ type: 'reasoning-start', id, redacted: str(block.data), origin: reasoningOrigin(s.model) });
      break;
    case 'tool_use':
    case 'server_tool_use':
      s.open[index] = { id, kind: 'tool' };
      // A server tool (web search, code execution, ...) is run by the upstream, never by the client.
      out.push({ type: 'tool-start', id, toolCallId: str(block.id), name: str(block.name), ...(block.type === 'server_tool_use' ? { server: true } : {}) });
      // The `input: {}` in a start is a placeholder, not content; a non-empty one is real.
      if (isObject(block.input) && Object.keys(block.input).length > 0) {
        out.push({ type: 'tool-delta', id, json: JSON.stringify(block.input) });
      }
      break;
    default: {
      // A server tool's result comes whole in its start; its stop then finds no open block.
      const result = serverToolResult(block, id);
      if (result) out.push(result);
    }
  }
}

function onBlockDelta(s: MessagesStreamState, index: number, delta: Json, out: UpstreamEvent[]): void {
  const block = s.open[index];
  if (!block) return;
  const id = block.id;
  switch (delta.type) {
    case 'text_delta':
      if (str(delta.text)) out.push({ type: 'text-delta', id, text: str(delta.text) });
      break;
    case 'thinking_delta':
      if (str(delta.thinking)) out.push({ type: 'reasoning-delta', id, text: str(delta.thinking) });
      break;
    case 'signature_delta':
      if (str(delta.signature)) out.push({ type: 'reasoning-signature', id, signature: str(delta.signature) });
      break;
    case 'input_json_delta':
      if (str(delta.partial_json)) out.push({ type: 'tool-delta', id, json: str(delta.partial_json) });
      break;
    case 'citations_delta':
      // Sent when the block closes: a citation comes before the text it backs, and the pipeline
      // shows a text block only once it has text.
      if (block.kind === 'text' && isObject(delta.citation) && typeof delta.citation.type === 'string') {
        s.open[index] = { ...block, citations: [...(block.citations ?? []), delta.citation as Citation] };
      }
      break;
  }
}

function closeBlock(s: MessagesStreamState, index: number, out: UpstreamEvent[]): void {
  const block = s.open[index];
  if (!block) return;
  delete s.open[index];
  for (const citation of block.citations ?? []) out.push({ type: 'citation', id: block.id, citation });
  const type = block.kind === 'text' ? 'text-end' : block.kind === 'reasoning' ? 'reasoning-end' : 'tool-end';
  out.push({ type, id: block.id });
}

function finishStream(s: MessagesStreamState, out: UpstreamEvent[]): void {
  if (!s.started) throw new GatewayError('bad_gateway', 'upstream stream ended before message_start', { retryable: true });
  for (const index of Object.keys(s.open)) closeBlock(s, Number(index), out);
  s.done = true;
  out.push({ type: 'finish', finish: s.finish ?? { unified: 'other' }, usage: s.usage });
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : -1;
}

