/**
 * SSE checks: every event parses, validates against its component schema (and, when given, the
 * provider's official schema), and comes in the order the interface spec and the providers'
 * protocols give. Returns the problems found (empty = fine).
 */
import type { Contract } from './load-contract.js';
import type { SseEvent } from './send-request.js';

export type StreamProtocol = 'openai-chat' | 'anthropic-messages' | 'openai-responses';

/** Optional second opinion: the providers' official schemas (test-only helper). */
export type OfficialCheck = (protocol: StreamProtocol, kind: 'event' | 'error-event', value: unknown) => string[];

/** The event union each operation's `text/event-stream` answer names in the document. */
const STREAM_EVENT: Record<StreamProtocol, string> = {
  'openai-chat': 'ChatCompletionStreamEvent',
  'anthropic-messages': 'MessageStreamEvent',
  'openai-responses': 'ResponseStreamEvent',
};

export function checkStream(contract: Contract, protocol: StreamProtocol, events: SseEvent[], official?: OfficialCheck): string[] {
  const problems: string[] = [];
  const parsed: Array<{ event?: string; data: any; raw: string }> = [];
  for (const [i, e] of events.entries()) {
    if (protocol === 'openai-chat' && e.data === '[DONE]') {
      parsed.push({ data: '[DONE]', raw: e.data });
      continue;
    }
    try {
      parsed.push({ event: e.event, data: JSON.parse(e.data), raw: e.data });
    } catch {
      problems.push(`event ${i}: data is not JSON: ${e.data.slice(0, 80)}`);
    }
  }
  if (problems.length) return problems;
  const order = protocol === 'openai-chat' ? chatOrder : protocol === 'anthropic-messages' ? messagesOrder : responsesOrder;
  problems.push(...order(parsed.map((p) => p.data), parsed.map((p) => p.event)));
  for (const [i, p] of parsed.entries()) {
    if (p.data === '[DONE]') continue;
    const isError = protocol === 'openai-chat' ? 'error' in p.data : p.data?.type === 'error';
    const schema = STREAM_EVENT[protocol];
    for (const err of contract.validateComponent(schema, p.data)) problems.push(`event ${i} (${p.data?.type ?? 'chunk'}) vs ${schema}: ${err}`);
    for (const err of official?.(protocol, isError ? 'error-event' : 'event', p.data) ?? []) problems.push(`event ${i} (${p.data?.type ?? 'chunk'}) vs official schema: ${err}`);
  }
  return problems;
}

/** Chunks, then `[DONE]` exactly once at the end; an error chunk only right before it. */
function chatOrder(data: any[]): string[] {
  const problems: string[] = [];
  const done = data.indexOf('[DONE]');
  if (done !== data.length - 1 || data.filter((d) => d === '[DONE]').length !== 1) problems.push('stream must end with exactly one data: [DONE]');
  const ids = new Set(data.filter((d) => d !== '[DONE]' && !d.error).map((d) => d.id));
  if (ids.size > 1) problems.push(`chunks carry ${ids.size} different ids`);
  const finished = new Set<number>();
  for (const [i, d] of data.entries()) {
    if (d === '[DONE]') continue;
    if (d.error && i !== data.length - 2) problems.push(`error chunk at ${i} is not the last before [DONE]`);
    for (const c of d.choices ?? []) {
      if (finished.has(c.index) && (c.delta?.content || c.delta?.tool_calls || c.finish_reason)) problems.push(`choice ${c.index}: output after its finish_reason (chunk ${i})`);
      if (c.finish_reason) finished.add(c.index);
    }
  }
  if (!data.some((d) => d?.error) && finished.size === 0) problems.push('no chunk carries a finish_reason');
  return problems;
}

/** message_start; blocks start/delta/stop in index order; message_delta; message_stop (or error last). */
function messagesOrder(data: any[], names: Array<string | undefined>): string[] {
  const problems: string[] = [];
  let phase: 'start' | 'blocks' | 'delta' | 'stopped' = 'start';
  let open: number | undefined;
  let next = 0;
  for (const [i, d] of data.entries()) {
    const t = d?.type;
    if (names[i] !== t) problems.push(`event ${i}: event name ${names[i]} but data.type ${t}`);
    if (t === 'ping') continue;
    if (t === 'error') {
      if (i !== data.length - 1) problems.push(`error event at ${i} is not the last event`);
      continue;
    }
    if (phase === 'stopped') problems.push(`event ${i} (${t}) after message_stop`);
    if (phase === 'start' && t !== 'message_start') problems.push(`event ${i} (${t}) before message_start`);
    if (t === 'message_start') {
      if (phase !== 'start') problems.push(`second message_start at ${i}`);
      phase = 'blocks';
    } else if (t === 'content_block_start') {
      if (open !== undefined || d.index !== next || phase !== 'blocks') problems.push(`content_block_start ${d.index} at ${i} (expected ${next}, open ${open}, phase ${phase})`);
      open = d.index;
      next = d.index + 1;
    } else if (t === 'content_block_delta' || t === 'content_block_stop') {
      if (open !== d.index) problems.push(`${t} for block ${d.index} at ${i} while block ${open} is open`);
      if (t === 'content_block_stop') open = undefined;
    } else if (t === 'message_delta') {
      if (open !== undefined || phase !== 'blocks') problems.push(`message_delta at ${i} (open block ${open}, phase ${phase})`);
      phase = 'delta';
    } else if (t === 'message_stop') {
      if (phase !== 'delta') problems.push(`message_stop at ${i} without a message_delta before it`);
      phase = 'stopped';
    }
  }
  const last = data[data.length - 1]?.type;
  if (last !== 'message_stop' && last !== 'error') problems.push(`stream ends with ${last}, not message_stop or error`);
  return problems;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** created, in_progress, items opened and closed in order, then one terminal event last. */
function responsesOrder(data: any[], names: Array<string | undefined>): string[] {
  const problems: string[] = [];
  const open = new Set<number>();
  let nextItem = 0;
  for (const [i, d] of data.entries()) {
    const t = d?.type;
    if (names[i] !== t) problems.push(`event ${i}: event name ${names[i]} but data.type ${t}`);
    if (d?.sequence_number !== i) problems.push(`event ${i} (${t}): sequence_number ${d?.sequence_number}`);
    if (i === 0 && t !== 'response.created') problems.push(`first event is ${t}, not response.created`);
    if (i === 1 && t !== 'response.in_progress') problems.push(`second event is ${t}, not response.in_progress`);
    if (TERMINAL.has(t) && i !== data.length - 1) problems.push(`${t} at ${i} is not the last event`);
    if (t === 'error' && data[i + 1]?.type !== 'response.failed') problems.push(`error at ${i} not followed by response.failed`);
    if (t === 'response.output_item.added') {
      if (d.output_index !== nextItem) problems.push(`output_item.added ${d.output_index} at ${i}, expected ${nextItem}`);
      open.add(d.output_index);
      nextItem = d.output_index + 1;
    } else if (t === 'response.output_item.done') {
      if (!open.delete(d.output_index)) problems.push(`output_item.done ${d.output_index} at ${i} for an item not open`);
    } else if (typeof d?.output_index === 'number' && !open.has(d.output_index)) {
      problems.push(`${t} at ${i} for item ${d.output_index}, which is not open`);
    }
    if ((t === 'response.completed' || t === 'response.incomplete') && open.size) problems.push(`${t} while items ${[...open]} are open`);
  }
  if (!TERMINAL.has(data[data.length - 1]?.type)) problems.push(`stream ends with ${data[data.length - 1]?.type}, not a terminal response event`);
  return problems;
}
