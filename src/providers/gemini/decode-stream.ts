import { GatewayError, emptyUsage, type Finish, type UpstreamEvent, type StreamTranslator, type Usage } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';
import { isObject, str, type Json } from '../shared/read-json.js';
import { parseEventJson } from '../transport/parse-event-json.js';
import { decodeStreamError } from './decode-error.js';
import { blockedPrompt, decodeFinish, decodeUsage, reasoningOrigin } from './decode-candidate.js';

export interface GeminiStreamState {
  /** Prefix of the tool call ids minted here (Gemini's function calls have none). */
  callIdPrefix: string;
  started: boolean;
  nextId: number;
  nextCall: number;
  /** The text or thought block that consecutive parts extend. */
  open?: { id: string; kind: 'text' | 'reasoning' };
  sawToolCall: boolean;
  usage: Usage;
  finish?: Finish;
  model?: string;
}

export function initGeminiStream(callIdPrefix: string): GeminiStreamState {
  return { callIdPrefix, started: false, nextId: 0, nextCall: 0, sawToolCall: false, usage: emptyUsage() };
}

/**
 * `GenerateContentResponse` chunks -> IR events (candidate 0). Text parts are deltas that extend
 * one text block; `thought: true` parts extend one reasoning block. A `thoughtSignature` on any
 * other part becomes a reasoning block of its own, just before that part's block, holding only
 * the signature: the encoder puts it back on the part that follows it (or on an empty text part
 * when none follows), byte for byte. Each function call is whole in one part and gets a minted id.
 * The finish comes at the end, when the last chunk (with the final usage) has been read.
 */
export const decodeChunks: StreamTranslator<GeminiStreamState, Json, UpstreamEvent> = {
  step(prev, chunk) {
    if (isObject(chunk.error)) throw decodeStreamError(chunk);
    const s: GeminiStreamState = { ...prev };
    const out: UpstreamEvent[] = [];
    if (!s.started) {
      s.started = true;
      s.model = str(chunk.modelVersion) || undefined;
      const usage = isObject(chunk.usageMetadata) ? decodeUsage(chunk.usageMetadata) : emptyUsage();
      out.push({ type: 'start', id: str(chunk.responseId), model: str(chunk.modelVersion), usage: { input: usage.input, output: { total: 0, reasoning: 0 } } });
    }
    if (isObject(chunk.usageMetadata)) s.usage = decodeUsage(chunk.usageMetadata);
    const candidate = Array.isArray(chunk.candidates) && isObject(chunk.candidates[0]) ? chunk.candidates[0] : undefined;
    if (!candidate) {
      if (isObject(chunk.promptFeedback) && str(chunk.promptFeedback.blockReason)) s.finish = blockedPrompt(chunk.promptFeedback);
      return [s, out];
    }
    const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) if (isObject(part)) decodePart(s, part, out);
    if (str(candidate.finishReason)) s.finish = decodeFinish(candidate, s.sawToolCall);
    return [s, out];
  },
  end(state) {
    if (state.finish === undefined) return [];
    const s: GeminiStreamState = { ...state };
    const out: UpstreamEvent[] = [];
    closeOpen(s, out);
    // A turn of function calls that ended for another reason (length) keeps that reason.
    const finish = s.finish!.unified === 'stop' && s.sawToolCall ? { ...s.finish!, unified: 'tool-calls' as const } : s.finish!;
    out.push({ type: 'finish', finish, usage: s.usage });
    return out;
  },
};

function decodePart(s: GeminiStreamState, part: Json, out: UpstreamEvent[]): void {
  const signature = str(part.thoughtSignature);
  if (part.thought === true) {
    const id = ensureOpen(s, 'reasoning', out);
    if (str(part.text)) out.push({ type: 'reasoning-delta', id, text: str(part.text) });
    if (signature) {
      out.push({ type: 'reasoning-signature', id, signature });
      closeOpen(s, out);
    }
    return;
  }
  if (signature) {
    closeOpen(s, out);
    const id = String(s.nextId++);
    out.push({ type: 'reasoning-start', id, origin: reasoningOrigin(s.model) }, { type: 'reasoning-signature', id, signature }, { type: 'reasoning-end', id });
  }
  if (typeof part.text === 'string') {
    if (part.text === '') return;
    const id = ensureOpen(s, 'text', out);
    out.push({ type: 'text-delta', id, text: part.text });
    return;
  }
  if (isObject(part.functionCall) && str(part.functionCall.name)) {
    closeOpen(s, out);
    const call = part.functionCall;
    const id = String(s.nextId++);
    const toolCallId = str(call.id) || `${s.callIdPrefix}_${s.nextCall}`;
    s.nextCall++;
    s.sawToolCall = true;
    out.push({ type: 'tool-start', id, toolCallId, name: str(call.name) }, { type: 'tool-delta', id, json: JSON.stringify(isObject(call.args) ? call.args : {}) }, { type: 'tool-end', id });
  }
  // Other parts (inline images, executable code and its results) have no IR stream home yet.
}

function ensureOpen(s: GeminiStreamState, kind: 'text' | 'reasoning', out: UpstreamEvent[]): string {
  if (s.open?.kind === kind) return s.open.id;
  closeOpen(s, out);
  const id = String(s.nextId++);
  s.open = { id, kind };
  out.push(kind === 'text' ? { type: 'text-start', id } : { type: 'reasoning-start', id, origin: reasoningOrigin(s.model) });
  return id;
}

function closeOpen(s: GeminiStreamState, out: UpstreamEvent[]): void {
  if (!s.open) return;
  out.push({ type: s.open.kind === 'text' ? 'text-end' : 'reasoning-end', id: s.open.id });
  s.open = undefined;
}

/** The SSE form (`streamGenerateContent?alt=sse`): every event's data is one chunk. */
export const decodeGeminiStream: StreamTranslator<GeminiStreamState, SseEvent, UpstreamEvent> = {
  step(state, sse) {
    if (sse.data.trim() === '') return [state, []];
    return decodeChunks.step(state, parseEventJson(sse.data));
  },
  end(state) {
    if (!state.started) throw new GatewayError('bad_gateway', 'upstream stream ended before its first chunk', { retryable: true });
    return decodeChunks.end!(state);
  },
};
