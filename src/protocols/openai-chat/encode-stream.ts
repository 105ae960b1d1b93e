import { refusalExplanation } from '../../ir/finish.js';
import type { ReasoningOrigin } from '../../ir/content.js';
import type { StreamEvent } from '../../ir/stream.js';
import type { StreamTranslator } from '../../ir/translator.js';
import type { EncodeMeta, SseFrame } from '../types.js';
import type { Published } from '../shared/published.js';
import { chatCompletionId } from '../shared/ids.js';
import { chatErrorObject } from './encode-error.js';
import { chatFinishReason, chatUsage, type ChatFinishReason } from './encode-response.js';
import { thinkingBlockValue } from '../shared/reasoning-envelope.js';

export interface ChatStreamState {
  id: string;
  created: number;
  /** Model named in chunks: the requested one, then the upstream's `start`, then each fallback target. */
  model: string;
  includeUsage: boolean;
  /** The role chunk went out. */
  started: boolean;
  /** `[DONE]` went out; later events are ignored. */
  done: boolean;
  /** IR tool block id -> `tool_calls[].index`, counted 0,1,2 in order of tool-start. */
  tools: Record<string, number>;
  nextTool: number;
  /** Each open reasoning block's origin, for the value its signature goes out as (thinkingBlockValue). */
  origins: Record<string, ReasoningOrigin | undefined>;
  /** The text so far of each open reasoning block, for its `thinking_blocks` entry. */
  thinking: Record<string, string>;
  /** Some answer text went out. */
  textSent?: boolean;
  /** A fallback came after answer text: the next model's text starts a new paragraph. */
  separate?: boolean;
}

export function initChatStream(meta: EncodeMeta): ChatStreamState {
  return {
    id: chatCompletionId(meta.requestId),
    created: meta.created,
    model: meta.requestedModel,
    includeUsage: meta.includeUsage,
    started: false,
    done: false,
    tools: {},
    nextTool: 0,
    origins: {},
    thinking: {},
  };
}

const DONE: SseFrame = { data: '[DONE]' };

/**
 * IR events -> chat.completion.chunk frames. Extensions to OpenAI's chunk shape, all additive:
 * - signed/redacted reasoning: the text streams on `reasoning_content`; once the block is signed,
 *   one delta carries the whole block, `thinking_blocks:[{type:"thinking",thinking,signature}]`
 *   (or `[{type:"redacted_thinking",data}]` at its start), ready to send back in
 *   `assistant.thinking_blocks` (the LiteLLM convention). Whole, because the openai SDK's stream
 *   helper keeps only the last value of a delta field it does not know.
 * - fallback: a chunk with an empty delta and `switchyard:{fallback:{from,to,reason,outcome,message}}`;
 *   later chunks name the new model. After answer text, the next model's text starts after a blank
 *   line (`\n\n`), the content being one string. A warning that arose after the headers went out (a later
 *   candidate's) is a chunk with an empty delta and `switchyard:{warning}`.
 */
export const chatStream: StreamTranslator<ChatStreamState, StreamEvent, SseFrame> = {
  step(state, ev) {
    if (state.done) return [state, []];
    const s: ChatStreamState = { ...state };
    const out: SseFrame[] = [];
    const begin = () => {
      if (s.started) return;
      s.started = true;
      out.push(chunk(s, { role: 'assistant', content: '' }));
    };
    const emit = (delta: Delta, extra: Pick<Chunk, 'switchyard'> = {}, finish: ChatFinishReason | null = null) => {
      begin();
      out.push(chunk(s, delta, finish, extra));
    };
    switch (ev.type) {
      case 'start':
        if (ev.model) s.model = ev.model;
        begin();
        break;
      case 'text-delta':
        if (ev.text !== '') {
          // One content string holds every model's text: a refused part and its continuation
          // would otherwise run into each other.
          emit({ content: s.separate ? `\n\n${ev.text}` : ev.text });
          s.textSent = true;
          s.separate = false;
        }
        break;
      case 'reasoning-start':
        s.origins = { ...s.origins, [ev.id]: ev.origin };
        s.thinking = { ...s.thinking, [ev.id]: '' };
        if (ev.redacted !== undefined) emit({ thinking_blocks: [{ type: 'redacted_thinking', data: thinkingBlockValue(ev.origin, ev.redacted, 'redacted') }] });
        break;
      case 'reasoning-delta':
        if (ev.text === '') break;
        emit({ reasoning_content: ev.text });
        if (s.thinking[ev.id] !== undefined) s.thinking = { ...s.thinking, [ev.id]: s.thinking[ev.id] + ev.text };
        break;
      case 'reasoning-signature':
        emit({ thinking_blocks: [{ type: 'thinking', thinking: s.thinking[ev.id] ?? '', signature: thinkingBlockValue(s.origins[ev.id], ev.signature, 'signature') }] });
        break;
      case 'reasoning-end':
        if (s.thinking[ev.id] !== undefined) {
          const { [ev.id]: _ended, ...open } = s.thinking;
          const { [ev.id]: _origin, ...origins } = s.origins;
          s.thinking = open;
          s.origins = origins;
        }
        break;
      case 'tool-start': {
        // A server tool the upstream ran has no Chat form: omitted, with its deltas (no index).
        if (ev.server) break;
        const index = s.nextTool++;
        s.tools = { ...s.tools, [ev.id]: index };
        emit({ tool_calls: [{ index, id: ev.toolCallId, type: 'function', function: { name: ev.name, arguments: '' } }] });
        break;
      }
      case 'tool-delta': {
        const index = s.tools[ev.id];
        if (ev.json !== '' && index !== undefined) emit({ tool_calls: [{ index, function: { arguments: ev.json } }] });
        break;
      }
      case 'fallback':
        s.model = ev.to;
        if (s.textSent) s.separate = true;
        emit({}, { switchyard: { fallback: { from: ev.from, to: ev.to, reason: ev.reason, outcome: ev.outcome, ...(ev.message ? { message: ev.message } : {}) } } });
        break;
      case 'warning':
        emit({}, { switchyard: { warning: ev.message } });
        break;
      case 'finish': {
        // A refusal's explanation goes out as OpenAI streams it: `delta.refusal`.
        const explanation = refusalExplanation(ev.finish);
        if (explanation) emit({ refusal: explanation });
        emit({}, {}, chatFinishReason(ev.finish.unified));
        if (s.includeUsage) out.push(frame({ ...head(s), choices: [], usage: chatUsage(ev.usage, ev.cost) }));
        out.push(DONE);
        s.done = true;
        break;
      }
      case 'error':
        out.push(frame(chatErrorObject(ev.error)), DONE);
        s.done = true;
        break;
      default:
        // text-start/-end, tool-end: chat has no block boundaries.
        break;
    }
    return [s, out];
  },
};

function head(s: ChatStreamState) {
  return { id: s.id, object: 'chat.completion.chunk' as const, created: s.created, model: s.model };
}

type Chunk = Published<'ChatCompletionChunk'>;
type Delta = Chunk['choices'][number]['delta'];

function chunk(s: ChatStreamState, delta: Delta, finish: ChatFinishReason | null = null, extra: Pick<Chunk, 'switchyard'> = {}): SseFrame {
  return frame({ ...head(s), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });
}

/** One `data:` payload: a chunk, or an error after the stream started (both as published). */
const frame = (body: Chunk | Published<'ChatStreamError'>): SseFrame => ({ data: JSON.stringify(body) });
