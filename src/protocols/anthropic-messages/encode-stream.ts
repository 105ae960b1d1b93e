import type { ReasoningOrigin } from '../../ir/content.js';
import type { StreamEvent } from '../../ir/stream.js';
import type { StreamTranslator } from '../../ir/translator.js';
import type { Usage } from '../../ir/usage.js';
import type { EncodeMeta, SseFrame } from '../types.js';
import { messageId } from '../shared/ids.js';
import { anthropicErrorObject } from './encode-error.js';
import { messagesUsage, stopFields } from './encode-response.js';
import { thinkingBlockValue } from '../shared/reasoning-envelope.js';

export interface MessagesStreamState {
  id: string;
  model: string;
  inputTokensEstimate: number;
  /** message_start went out (exactly once, even across fallbacks). */
  started: boolean;
  /** message_stop or error went out; later events are ignored. */
  done: boolean;
  /** Next content block index (0,1,2... over the whole stream, fallback blocks included). */
  nextIndex: number;
  /** Open IR block id -> content block index, in opening order. */
  open: Record<string, number>;
  /** Each open reasoning block's origin, for the value its signature goes out as (thinkingBlockValue). */
  origins: Record<string, ReasoningOrigin | undefined>;
  /** 1 + fallbacks seen: `usage.iterations`. */
  attempts: number;
  /** Warnings that arose after the headers went out (a later candidate's), sent on `message_delta`. */
  warnings: string[];
}

export function initMessagesStream(meta: EncodeMeta): MessagesStreamState {
  return {
    id: messageId(meta.requestId),
    model: meta.requestedModel,
    inputTokensEstimate: meta.inputTokensEstimate,
    started: false,
    done: false,
    nextIndex: 0,
    open: {},
    origins: {},
    attempts: 1,
    warnings: [],
  };
}

/**
 * IR events -> Messages SSE events. Blocks get sequential indexes; parallel tool blocks may
 * interleave and are routed by their IR id. A fallback becomes a complete `fallback` block at
 * its own index; blocks still open when a fallback, finish or error arrives are closed first.
 * Empty text/thinking/input_json deltas are never emitted.
 */
export const messagesStream: StreamTranslator<MessagesStreamState, StreamEvent, SseFrame> = {
  step(state, ev) {
    if (state.done) return [state, []];
    const s: MessagesStreamState = { ...state, open: { ...state.open } };
    const out: SseFrame[] = [];
    const begin = (model?: string, usage?: Usage) => {
      if (s.started) return;
      s.started = true;
      if (model) s.model = model;
      // Anthropic sends a ping right after message_start; some clients expect one early.
      out.push(messageStart(s, usage), frame({ type: 'ping' }));
    };
    const openBlock = (id: string | undefined, contentBlock: Record<string, unknown>) => {
      begin();
      const index = s.nextIndex++;
      if (id !== undefined) s.open[id] = index;
      out.push(frame({ type: 'content_block_start', index, content_block: contentBlock }));
      return index;
    };
    const delta = (id: string, d: Record<string, unknown>) => {
      const index = s.open[id];
      if (index !== undefined) out.push(frame({ type: 'content_block_delta', index, delta: d }));
    };
    const close = (id: string) => {
      const index = s.open[id];
      if (index === undefined) return;
      delete s.open[id];
      out.push(frame({ type: 'content_block_stop', index }));
    };
    const closeAll = () => Object.keys(s.open).forEach(close);

    switch (ev.type) {
      case 'start':
        begin(ev.model, ev.usage);
        break;
      case 'text-start':
        openBlock(ev.id, { type: 'text', text: '' });
        break;
      case 'reasoning-start':
        s.origins = { ...s.origins, [ev.id]: ev.origin };
        openBlock(ev.id, ev.redacted !== undefined ? { type: 'redacted_thinking', data: thinkingBlockValue(ev.origin, ev.redacted, 'redacted') } : { type: 'thinking', thinking: '', signature: '' });
        break;
      case 'tool-start':
        openBlock(ev.id, { type: ev.server ? 'server_tool_use' : 'tool_use', id: ev.toolCallId, name: ev.name, input: {} });
        break;
      case 'server-tool-result': {
        // Whole in its start, as Anthropic sends it.
        const index = openBlock(undefined, { type: ev.kind, tool_use_id: ev.toolCallId, content: ev.content });
        out.push(frame({ type: 'content_block_stop', index }));
        break;
      }
      case 'citation':
        delta(ev.id, { type: 'citations_delta', citation: ev.citation });
        break;
      case 'text-delta':
        if (ev.text !== '') delta(ev.id, { type: 'text_delta', text: ev.text });
        break;
      case 'reasoning-delta':
        if (ev.text !== '') delta(ev.id, { type: 'thinking_delta', thinking: ev.text });
        break;
      case 'reasoning-signature':
        if (ev.signature !== '') delta(ev.id, { type: 'signature_delta', signature: thinkingBlockValue(s.origins[ev.id], ev.signature, 'signature') });
        break;
      case 'tool-delta':
        if (ev.json !== '') delta(ev.id, { type: 'input_json_delta', partial_json: ev.json });
        break;
      case 'text-end':
      case 'reasoning-end':
      case 'tool-end':
        close(ev.id);
        break;
      case 'fallback': {
        closeAll();
        const index = openBlock(undefined, { type: 'fallback', from: ev.from, to: ev.to, reason: ev.reason });
        out.push(frame({ type: 'content_block_stop', index }));
        s.attempts += 1;
        s.model = ev.to;
        break;
      }
      case 'warning':
        s.warnings = [...s.warnings, ev.message];
        break;
      case 'finish':
        begin();
        closeAll();
        out.push(
          frame({
            type: 'message_delta',
            delta: stopFields(ev.finish),
            usage: messagesUsage(ev.usage, s.attempts, ev.cost),
            ...(s.warnings.length ? { switchyard: { warnings: s.warnings } } : {}),
          }),
        );
        out.push(frame({ type: 'message_stop' }));
        s.done = true;
        break;
      case 'error':
        closeAll();
        out.push(frame({ type: 'error', error: anthropicErrorObject(ev.error) }));
        s.done = true;
        break;
    }
    return [s, out];
  },
};

function messageStart(s: MessagesStreamState, usage?: Usage): SseFrame {
  const u = usage
    ? { input_tokens: usage.input.noCache, cache_creation_input_tokens: usage.input.cacheWrite, cache_read_input_tokens: usage.input.cacheRead }
    : { input_tokens: s.inputTokensEstimate, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = {
    id: s.id,
    type: 'message',
    role: 'assistant',
    model: s.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...u, output_tokens: usage?.output.total ?? 0 },
  };
  return frame({ type: 'message_start', message });
}

/** Every Messages event names its type in the SSE `event:` field too. */
function frame(body: { type: string } & Record<string, unknown>): SseFrame {
  return { event: body.type, data: JSON.stringify(body) };
}
