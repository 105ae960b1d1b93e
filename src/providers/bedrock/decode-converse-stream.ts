import { GatewayError, emptyUsage, type Finish, type UpstreamEvent, type StreamTranslator, type Usage } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';
import { isObject, str, type Json } from '../shared/read-json.js';
import { parseEventJson } from '../transport/parse-event-json.js';
import { converseOrigin, decodeConverseUsage, decodeStopReason, redactedData } from './decode-converse.js';
import { decodeStreamException } from './decode-error.js';
import { EXCEPTION_PREFIX } from './read-event-stream.js';

type Kind = 'text' | 'reasoning' | 'tool';

export interface ConverseStreamState {
  model: string;
  started: boolean;
  nextId: number;
  /** Open blocks by `contentBlockIndex`. */
  open: Record<number, { id: string; kind: Kind }>;
  usage: Usage;
  finish?: Finish;
}

export function initConverseStream(model: string): ConverseStreamState {
  return { model, started: false, nextId: 0, open: {}, usage: emptyUsage() };
}

/**
 * ConverseStream frames -> IR events. Text and reasoning blocks have no `contentBlockStart`: a
 * block opens at its first delta, its kind read from the delta; a tool block starts with its
 * name and id, and its input arrives as string fragments. `messageStop` says why it stopped, and
 * `metadata` (after it) the usage: the finish is emitted when the stream ends.
 */
export const decodeConverseStream: StreamTranslator<ConverseStreamState, SseEvent, UpstreamEvent> = {
  step(prev, frame) {
    const type = frame.event ?? '';
    if (type.startsWith(EXCEPTION_PREFIX)) throw decodeStreamException(type.slice(EXCEPTION_PREFIX.length), frame.data);
    const ev = parseEventJson(frame.data);
    const s: ConverseStreamState = { ...prev, open: { ...prev.open } };
    const out: UpstreamEvent[] = [];
    if (!s.started && type !== 'metadata') {
      s.started = true;
      out.push({ type: 'start', id: '', model: s.model });
    }
    const index = typeof ev.contentBlockIndex === 'number' ? ev.contentBlockIndex : -1;
    switch (type) {
      case 'contentBlockStart': {
        const tool = isObject(ev.start) && isObject(ev.start.toolUse) ? ev.start.toolUse : undefined;
        if (tool) {
          const id = String(s.nextId++);
          s.open[index] = { id, kind: 'tool' };
          out.push({ type: 'tool-start', id, toolCallId: str(tool.toolUseId), name: str(tool.name) });
        }
        break;
      }
      case 'contentBlockDelta':
        onDelta(s, index, isObject(ev.delta) ? ev.delta : {}, out);
        break;
      case 'contentBlockStop':
        close(s, index, out);
        break;
      case 'messageStop':
        s.finish = decodeStopReason(str(ev.stopReason));
        break;
      case 'metadata':
        s.usage = decodeConverseUsage(ev.usage, ev.serviceTier);
        break;
      // messageStart says only the role; unknown events are ignored.
    }
    return [s, out];
  },
  end(state) {
    if (!state.started || state.finish === undefined) {
      throw new GatewayError('bad_gateway', 'upstream stream ended before messageStop', { retryable: true });
    }
    const s: ConverseStreamState = { ...state, open: { ...state.open } };
    const out: UpstreamEvent[] = [];
    for (const index of Object.keys(s.open)) close(s, Number(index), out);
    out.push({ type: 'finish', finish: s.finish!, usage: s.usage });
    return out;
  },
};

function onDelta(s: ConverseStreamState, index: number, delta: Json, out: UpstreamEvent[]): void {
  if (typeof delta.text === 'string') {
    const id = ensure(s, index, 'text', out);
    if (delta.text) out.push({ type: 'text-delta', id, text: delta.text });
    return;
  }
  if (isObject(delta.toolUse)) {
    const block = s.open[index];
    if (block?.kind === 'tool' && str(delta.toolUse.input)) out.push({ type: 'tool-delta', id: block.id, json: str(delta.toolUse.input) });
    return;
  }
  if (!isObject(delta.reasoningContent)) return;
  const r = delta.reasoningContent;
  if (r.redactedContent !== undefined) {
    close(s, index, out);
    const id = String(s.nextId++);
    s.open[index] = { id, kind: 'reasoning' };
    out.push({ type: 'reasoning-start', id, redacted: redactedData(r.redactedContent), origin: converseOrigin(s.model) });
    return;
  }
  const id = ensure(s, index, 'reasoning', out);
  if (str(r.text)) out.push({ type: 'reasoning-delta', id, text: str(r.text) });
  if (str(r.signature)) out.push({ type: 'reasoning-signature', id, signature: str(r.signature) });
}

function ensure(s: ConverseStreamState, index: number, kind: Kind, out: UpstreamEvent[]): string {
  const open = s.open[index];
  if (open?.kind === kind) return open.id;
  if (open) close(s, index, out);
  const id = String(s.nextId++);
  s.open[index] = { id, kind };
  out.push(kind === 'text' ? { type: 'text-start', id } : { type: 'reasoning-start', id, origin: converseOrigin(s.model) });
  return id;
}

function close(s: ConverseStreamState, index: number, out: UpstreamEvent[]): void {
  const block = s.open[index];
  if (!block) return;
  delete s.open[index];
  out.push({ type: block.kind === 'text' ? 'text-end' : block.kind === 'reasoning' ? 'reasoning-end' : 'tool-end', id: block.id });
}
