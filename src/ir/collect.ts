import type { AssistantPart, ReasoningPart, ServerToolCallPart, TextPart, ToolCallPart } from './content.js';
import type { Finish } from './finish.js';
import type { StreamEvent, UpstreamEvent } from './stream.js';
import { emptyUsage, type Usage } from './usage.js';

type OpenPart = TextPart | ReasoningPart | ToolCallPart | ServerToolCallPart;

/** What a stream adds up to: the content blocks in order, the finish and the usage. */
export interface Collected {
  id: string;
  model: string;
  content: AssistantPart[];
  finish: Finish;
  usage: Usage;
  cost?: bigint;
}

/**
 * Folds IR stream events into a whole answer. Used for non-streamed client requests (every
 * provider answers as IR events, whether its upstream streamed or not) and for tests.
 */
export class Collector {
  id = '';
  model = '';
  content: AssistantPart[] = [];
  finish: Finish = { unified: 'other' };
  usage: Usage = emptyUsage();
  cost?: bigint;
  private open = new Map<string, OpenPart>();

  push(ev: StreamEvent | UpstreamEvent): void {
    switch (ev.type) {
      case 'start':
        if (!this.id) this.id = ev.id;
        this.model = ev.model;
        break;
      case 'text-start':
        this.openBlock(ev.id, { type: 'text', text: '' });
        break;
      case 'text-delta': {
        const b = this.open.get(ev.id);
        if (b?.type === 'text') b.text += ev.text;
        break;
      }
      case 'reasoning-start':
        this.openBlock(ev.id, {
          type: 'reasoning',
          text: '',
          ...(ev.redacted !== undefined ? { redacted: ev.redacted } : {}),
          ...(ev.origin ? { origin: ev.origin } : {}),
        });
        break;
      case 'reasoning-delta': {
        const b = this.open.get(ev.id);
        if (b?.type === 'reasoning') b.text += ev.text;
        break;
      }
      case 'reasoning-signature': {
        const b = this.open.get(ev.id);
        if (b?.type === 'reasoning') b.signature = (b.signature ?? '') + ev.signature;
        break;
      }
      case 'tool-start':
        this.openBlock(ev.id, { type: ev.server ? 'server-tool-call' : 'tool-call', id: ev.toolCallId, name: ev.name, arguments: '' });
        break;
      case 'tool-delta': {
        const b = this.open.get(ev.id);
        if (b?.type === 'tool-call' || b?.type === 'server-tool-call') b.arguments += ev.json;
        break;
      }
      case 'tool-end': {
        const b = this.open.get(ev.id);
        if ((b?.type === 'tool-call' || b?.type === 'server-tool-call') && b.arguments.trim() === '') b.arguments = '{}';
        this.open.delete(ev.id);
        break;
      }
      case 'server-tool-result':
        this.content.push({ type: 'server-tool-result', toolCallId: ev.toolCallId, kind: ev.kind, content: ev.content });
        break;
      case 'citation': {
        const b = this.open.get(ev.id);
        if (b?.type === 'text') (b.citations ??= []).push(ev.citation);
        break;
      }
      case 'text-end':
      case 'reasoning-end':
        this.open.delete(ev.id);
        break;
      case 'fallback':
        this.content.push({ type: 'fallback', from: ev.from, to: ev.to, reason: ev.reason });
        break;
      case 'warning':
        // Whole answers carry every warning in their headers.
        break;
      case 'finish':
        this.finish = ev.finish;
        this.usage = ev.usage;
        this.cost = 'cost' in ev ? ev.cost : undefined;
        break;
      case 'error':
        throw ev.error;
    }
  }

  private openBlock(id: string, part: OpenPart): void {
    this.open.set(id, part);
    this.content.push(part);
  }
}
