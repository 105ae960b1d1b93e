import type { Attempt, Finish, GatewayError, ReasoningOrigin, StreamEvent, StreamTranslator, Usage } from '../../ir/index.js';
import { GatewayError as GatewayErrorClass, refusalExplanation, toolGroupOf } from '../../ir/index.js';
import type { EncodeMeta, SseFrame } from '../types.js';
import { buildResponse, encryptedContentFor, itemId, statusOf, type ShellInput } from './build-response.js';
import { errorCode, errorType, responseErrorCode } from './encode-error.js';
import { functionCallItem, messageItem, outputText, reasoningItem, refusalItem, refusalPart } from './encode-response.js';

type Json = Record<string, unknown>;

interface Block {
  kind: 'text' | 'reasoning' | 'tool';
  index: number;
  itemId: string;
  /** Text, summary text or arguments so far. */
  text: string;
  callId?: string;
  name?: string;
  summaryOpen?: boolean;
  /** Reasoning only: what encrypted_content is made of (known in full at the block's end). */
  reasoning?: { origin?: ReasoningOrigin; redacted?: string; signature?: string };
}

/** One stream's encoder state. It is owned by that stream: `step` updates it and hands it back. */
export interface ResponsesStreamState {
  meta: EncodeMeta;
  seq: number;
  started: boolean;
  done: boolean;
  model: string;
  /** `output[i]` is the latest snapshot of the item at output_index i (across all attempts). */
  output: Json[];
  open: Map<string, Block>;
  /**
   * A text or tool block whose end arrived: it is closed with the next event, as `incomplete` when
   * that event is a finish at the output ceiling (which cut it), else `completed`.
   */
  ending?: string;
  /** The run's attempts, as the pipeline's final event (finish or error) reports them. */
  attempts: Attempt[];
  /** Which variant serves now: the first attempt's (from meta), then each fallback's. */
  variant?: 'standard' | 'fast';
  /** Warnings that arose after the headers went out (a later candidate's); reported on the final response. */
  warnings: string[];
}

export function initStream(meta: EncodeMeta): ResponsesStreamState {
  return { meta, seq: 0, started: false, done: false, model: meta.requestedModel, output: [], open: new Map(), attempts: [], warnings: [] };
}

/**
 * IR events into Responses SSE events, in the order the real API sends them (see the recorded
 * transcripts). Every event carries `type` and a `sequence_number` counting from 0.
 */
export const stream: StreamTranslator<ResponsesStreamState, StreamEvent, SseFrame> = {
  step(s, ev) {
    if (s.done) return [s, []];
    const out: SseFrame[] = [];
    const emit = (type: string, fields: Json) => {
      out.push({ event: type, data: JSON.stringify({ type, sequence_number: s.seq++, ...fields }) });
    };
    if (ev.type === 'start') s.model = ev.model;
    if (!s.started) start(s, emit);
    onEvent(s, ev, emit);
    return [s, out];
  },
  end(s) {
    if (s.done) return [];
    // The pipeline always ends with finish or error; a stream that stops short is reported, not
    // hidden. No record of its attempts reached the encoder, and the encoder makes none up.
    const [, frames] = stream.step(s, { type: 'error', error: new GatewayErrorClass('api_error', 'stream ended before the response finished'), attempts: s.attempts });
    return frames;
  },
};

type Emit = (type: string, fields: Json) => void;

function start(s: ResponsesStreamState, emit: Emit): void {
  s.started = true;
  const response = shell(s, { status: 'in_progress', usage: null, incomplete: null, error: null });
  emit('response.created', { response });
  emit('response.in_progress', { response });
}

function onEvent(s: ResponsesStreamState, ev: StreamEvent, emit: Emit): void {
  if (s.ending !== undefined) {
    const b = s.open.get(s.ending);
    if (b) closeBlock(s, s.ending, b, ev.type === 'finish' && ev.finish.unified === 'length' ? 'incomplete' : 'completed', emit);
    s.ending = undefined;
  }
  switch (ev.type) {
    case 'start':
      return;
    case 'tool-start':
      // A server tool the upstream ran has no Responses form here: omitted, with its deltas.
      if (ev.server) return;
      return openBlock(s, ev, emit);
    case 'text-start':
    case 'reasoning-start':
      return openBlock(s, ev, emit);
    case 'text-delta':
    case 'reasoning-delta':
    case 'tool-delta':
      return delta(s, ev, emit);
    case 'reasoning-signature': {
      const r = s.open.get(ev.id)?.reasoning;
      if (r) r.signature = (r.signature ?? '') + ev.signature;
      return;
    }
    case 'text-end':
    case 'tool-end':
      if (s.open.has(ev.id)) s.ending = ev.id;
      return;
    case 'reasoning-end': {
      const b = s.open.get(ev.id);
      if (b) closeBlock(s, ev.id, b, 'completed', emit);
      return;
    }
    case 'fallback':
      closeAll(s, emit);
      s.model = ev.to;
      s.variant = ev.variant;
      return;
    case 'warning':
      s.warnings.push(ev.message);
      return;
    case 'finish':
      return finish(s, ev.finish, ev.usage, emit, ev.attempts, ev.cost);
    case 'error':
      return fail(s, ev.error, emit, ev.attempts);
  }
}

function openBlock(s: ResponsesStreamState, ev: Extract<StreamEvent, { type: 'text-start' | 'reasoning-start' | 'tool-start' }>, emit: Emit): void {
  const index = s.output.length;
  let b: Block;
  if (ev.type === 'text-start') {
    b = { kind: 'text', index, itemId: itemId(s.meta, 'msg', index), text: '' };
    s.output.push(messageItem(b.itemId, 'in_progress', []));
  } else if (ev.type === 'reasoning-start') {
    const reasoning = { origin: ev.origin, ...(ev.redacted !== undefined ? { redacted: ev.redacted } : {}) };
    b = { kind: 'reasoning', index, itemId: itemId(s.meta, 'rs', index), text: '', reasoning };
    // Redacted data is whole at the start; a signature only arrives at the end (then in .done).
    s.output.push(reasoningItem(b.itemId, [], encryptedContentFor({ ...reasoning, text: '' })));
  } else {
    b = { kind: 'tool', index, itemId: itemId(s.meta, 'fc', index), text: '', callId: ev.toolCallId, name: ev.name };
    s.output.push(functionCallItem(b.itemId, ev.toolCallId, ev.name, '', 'in_progress', toolGroupOf(s.meta.request.tools, ev.name)));
  }
  s.open.set(ev.id, b);
  emit('response.output_item.added', { output_index: index, item: s.output[index] });
  if (b.kind === 'text') {
    emit('response.content_part.added', { item_id: b.itemId, output_index: index, content_index: 0, part: outputText('') });
  }
}

function delta(s: ResponsesStreamState, ev: Extract<StreamEvent, { type: 'text-delta' | 'reasoning-delta' | 'tool-delta' }>, emit: Emit): void {
  const b = s.open.get(ev.id);
  const piece = ev.type === 'tool-delta' ? ev.json : ev.text;
  if (!b || piece === '') return;
  b.text += piece;
  const where = { item_id: b.itemId, output_index: b.index };
  if (b.kind === 'text') {
    emit('response.output_text.delta', { ...where, content_index: 0, delta: piece, logprobs: [] });
  } else if (b.kind === 'reasoning') {
    if (!b.summaryOpen) {
      b.summaryOpen = true;
      emit('response.reasoning_summary_part.added', { ...where, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    emit('response.reasoning_summary_text.delta', { ...where, summary_index: 0, delta: piece });
  } else {
    emit('response.function_call_arguments.delta', { ...where, delta: piece });
  }
}

function closeBlock(s: ResponsesStreamState, id: string, b: Block, status: 'completed' | 'incomplete', emit: Emit): void {
  s.open.delete(id);
  const where = { item_id: b.itemId, output_index: b.index };
  if (b.kind === 'text') {
    emit('response.output_text.done', { ...where, content_index: 0, text: b.text, logprobs: [] });
    emit('response.content_part.done', { ...where, content_index: 0, part: outputText(b.text) });
    s.output[b.index] = messageItem(b.itemId, status, [b.text]);
  } else if (b.kind === 'reasoning') {
    if (b.summaryOpen) {
      emit('response.reasoning_summary_text.done', { ...where, summary_index: 0, text: b.text });
      emit('response.reasoning_summary_part.done', { ...where, summary_index: 0, part: { type: 'summary_text', text: b.text } });
    }
    s.output[b.index] = reasoningItem(b.itemId, b.summaryOpen ? [b.text] : [], encryptedContentFor({ ...b.reasoning, text: b.text }));
  } else {
    // A tool without input still gets valid JSON (same rule as the Collector).
    const args = b.text.trim() === '' ? '{}' : b.text;
    const group = toolGroupOf(s.meta.request.tools, b.name ?? '');
    emit('response.function_call_arguments.done', { ...where, name: group?.name ?? b.name, arguments: args });
    s.output[b.index] = functionCallItem(b.itemId, b.callId ?? '', b.name ?? '', args, status, group);
  }
  emit('response.output_item.done', { output_index: b.index, item: s.output[b.index] });
}

/** Blocks still open when an attempt ends (fallback, finish) are closed as incomplete. */
function closeAll(s: ResponsesStreamState, emit: Emit): void {
  for (const [id, b] of [...s.open.entries()].sort((x, y) => x[1].index - y[1].index)) closeBlock(s, id, b, 'incomplete', emit);
}

function finish(s: ResponsesStreamState, f: Finish, usage: Usage, emit: Emit, attempts: Attempt[], cost?: bigint): void {
  closeAll(s, emit);
  const refusal = refusalExplanation(f);
  if (refusal) emitRefusal(s, refusal, emit);
  s.attempts = [...attempts];
  const { status, incomplete } = statusOf(f);
  const response = shell(s, { status, usage, cost, incomplete, error: null }, true);
  emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  s.done = true;
}

/** A refusal's explanation as its own message item, with the events the API sends for one. */
function emitRefusal(s: ResponsesStreamState, refusal: string, emit: Emit): void {
  const index = s.output.length;
  const id = itemId(s.meta, 'msg', index);
  const where = { item_id: id, output_index: index, content_index: 0 };
  s.output.push(messageItem(id, 'in_progress', []));
  emit('response.output_item.added', { output_index: index, item: s.output[index] });
  emit('response.content_part.added', { ...where, part: refusalPart('') });
  emit('response.refusal.delta', { ...where, delta: refusal });
  emit('response.refusal.done', { ...where, refusal });
  emit('response.content_part.done', { ...where, part: refusalPart(refusal) });
  s.output[index] = refusalItem(id, 'completed', refusal);
  emit('response.output_item.done', { output_index: index, item: s.output[index] });
}

/** Mid-stream failure: an `error` event, then `response.failed`; the stream then ends cleanly. */
function fail(s: ResponsesStreamState, err: GatewayError, emit: Emit, attempts: Attempt[]): void {
  const code = errorCode(err);
  const param = err.param ?? null;
  // Top-level fields are the official ResponseErrorEvent; the nested `error` is what the live API
  // also sends (recorded transcript), and what the OpenAI SDKs raise as an APIError.
  emit('error', { code, message: err.message, param, error: { type: errorType(err), code, message: err.message, param } });
  // Open items stay as they were, marked incomplete, without done events (as the API does).
  for (const b of s.open.values()) {
    const item = s.output[b.index];
    if (item) s.output[b.index] = { ...item, status: 'incomplete' };
  }
  s.open.clear();
  s.attempts = [...attempts];
  const response = shell(s, { status: 'failed', usage: null, incomplete: null, error: { code: responseErrorCode(err), message: err.message } }, true);
  emit('response.failed', { response });
  s.done = true;
}

function shell(s: ResponsesStreamState, p: Omit<ShellInput, 'model' | 'output' | 'switchyard'>, final = false): Json {
  return buildResponse(s.meta, {
    ...p,
    model: s.model,
    output: [...s.output],
    ...(final ? { switchyard: { attempts: [...s.attempts], servedVariant: s.variant ?? s.meta.servedVariant, warnings: [...s.warnings] } } : {}),
  });
}
