import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../ir/errors.js';
import type { StreamEvent } from '../../ir/stream.js';
import { encodeAll, testMeta, usage } from '../../../test/support/encoder-fixtures.js';
import { validateOfficial, withoutSwitchyardExtensions } from '../../../test/support/official-schemas.js';
import { initMessagesStream, messagesStream } from './encode-stream.js';
import { REFERENCE_PRESENT, TRANSCRIPTS_DIR } from '../../../tools/reference.js';
import { pathToFileURL } from 'node:url';

// Pings carry nothing; one test below checks the one after message_start, the rest skip them.
const runWithPings = (events: StreamEvent[]) => encodeAll(messagesStream, initMessagesStream(testMeta()), events);
const run = (events: StreamEvent[]) => runWithPings(events).filter((x) => x.event !== 'ping');
const f = (data: { type: string } & Record<string, unknown>) => ({ event: data.type, data });
const start: StreamEvent = { type: 'start', id: 'up', model: 'model-a' };
const messageStart = (input = 42, model = 'model-a') =>
  f({
    type: 'message_start',
    message: {
      id: 'msg_req1', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    },
  });
const blockStart = (index: number, content_block: Record<string, unknown>) => f({ type: 'content_block_start', index, content_block });
const delta = (index: number, d: Record<string, unknown>) => f({ type: 'content_block_delta', index, delta: d });
const stop = (index: number) => f({ type: 'content_block_stop', index });
const finishFrames = (stop_reason: string, iterations = 1, extra: Record<string, unknown> = {}) => [
  f({
    type: 'message_delta',
    delta: { stop_reason, stop_sequence: null, ...extra },
    usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5, ...(iterations > 1 ? { iterations } : {}) },
  }),
  f({ type: 'message_stop' }),
];
const finish = (unified: 'stop' | 'length' | 'tool-calls' | 'refusal' = 'stop', details?: Record<string, unknown>): StreamEvent => ({
  type: 'finish', attempts: [],
  finish: { unified, ...(details ? { details } : {}) },
  usage: usage(10, 5),
});

function expectOfficial(frames: ReturnType<typeof run>) {
  for (const fr of frames) {
    const v = withoutSwitchyardExtensions(fr.data);
    if (v === undefined || v === '[DONE]' || (v as { type: string }).type === 'error') continue;
    expect(validateOfficial('anthropic', 'MessageStreamEvent', v), JSON.stringify(v)).toEqual([]);
  }
}

describe('messages stream encoder', () => {
  it('sends a ping right after message_start, as Anthropic does', () => {
    const frames = runWithPings([start, { type: 'text-start', id: 't' }, { type: 'text-end', id: 't' }, finish()]);
    expect(frames.map((x) => x.event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(frames[1]!.data).toEqual({ type: 'ping' });
  });

  it('text: one message_start, block lifecycle, message_delta, message_stop; no empty deltas', () => {
    const frames = run([
      { type: 'start', id: 'up', model: 'model-a', usage: usage(7, 0, { cacheRead: 2 }) },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', text: '' },
      { type: 'text-delta', id: 't', text: 'Hi' },
      { type: 'text-end', id: 't' },
      finish(),
    ]);
    const ms = messageStart(7);
    (ms.data.message as { usage: Record<string, number> }).usage.cache_read_input_tokens = 2;
    expect(frames).toEqual([ms, blockStart(0, { type: 'text', text: '' }), delta(0, { type: 'text_delta', text: 'Hi' }), stop(0), ...finishFrames('end_turn')]);
    expectOfficial(frames);
  });

  it('reasoning with signature, then text (thinking opens before the answer)', () => {
    const frames = run([
      start,
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', text: 'Let me think' },
      { type: 'reasoning-signature', id: 'r', signature: 'EqQB+/==' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'reasoning-start', id: 'x', redacted: 'opaque' },
      { type: 'reasoning-end', id: 'x' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', text: 'Answer' },
      { type: 'text-end', id: 't' },
      finish(),
    ]);
    expect(frames).toEqual([
      messageStart(),
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      delta(0, { type: 'thinking_delta', thinking: 'Let me think' }),
      delta(0, { type: 'signature_delta', signature: 'EqQB+/==' }),
      stop(0),
      blockStart(1, { type: 'redacted_thinking', data: 'opaque' }),
      stop(1),
      blockStart(2, { type: 'text', text: '' }),
      delta(2, { type: 'text_delta', text: 'Answer' }),
      stop(2),
      ...finishFrames('end_turn'),
    ]);
    expectOfficial(frames);
  });

  it('parallel interleaved tool blocks map to their own index; empty-input tool gets no empty delta', () => {
    const frames = run([
      start,
      { type: 'tool-start', id: 'a', toolCallId: 'toolu_a', name: 'weather' },
      { type: 'tool-start', id: 'b', toolCallId: 'toolu_b', name: 'now' },
      { type: 'tool-delta', id: 'a', json: '{"city":' },
      { type: 'tool-delta', id: 'b', json: '' },
      { type: 'tool-end', id: 'b' },
      { type: 'tool-delta', id: 'a', json: '"Paris"}' },
      { type: 'tool-end', id: 'a' },
      finish('tool-calls'),
    ]);
    expect(frames).toEqual([
      messageStart(),
      blockStart(0, { type: 'tool_use', id: 'toolu_a', name: 'weather', input: {} }),
      blockStart(1, { type: 'tool_use', id: 'toolu_b', name: 'now', input: {} }),
      delta(0, { type: 'input_json_delta', partial_json: '{"city":' }),
      stop(1),
      delta(0, { type: 'input_json_delta', partial_json: '"Paris"}' }),
      stop(0),
      ...finishFrames('tool_use'),
    ]);
    expectOfficial(frames);
  });

  it('fallback mid-stream: open block closed, fallback block at its own index, message_start once, iterations 2', () => {
    const frames = run([
      start,
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', text: 'I' },
      { type: 'fallback', from: 'model-a', to: 'model-b', reason: 'refusal', outcome: 'refusal' },
      { type: 'text-end', id: 't1' },
      { type: 'start', id: 'up2', model: 'model-b' },
      { type: 'text-start', id: 't2' },
      { type: 'text-delta', id: 't2', text: 'Sure' },
      { type: 'text-end', id: 't2' },
      finish(),
    ]);
    expect(frames).toEqual([
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'I' }),
      stop(0),
      blockStart(1, { type: 'fallback', from: 'model-a', to: 'model-b', reason: 'refusal' }),
      stop(1),
      blockStart(2, { type: 'text', text: '' }),
      delta(2, { type: 'text_delta', text: 'Sure' }),
      stop(2),
      ...finishFrames('end_turn', 2),
    ]);
    expect(frames.filter((x) => x.event === 'message_start')).toHaveLength(1);
    expectOfficial(frames);
  });

  it('error mid-stream: open block closed, then an error event, and nothing after', () => {
    const frames = run([
      start,
      { type: 'tool-start', id: 'a', toolCallId: 'toolu_a', name: 'weather' },
      { type: 'error', attempts: [], error: new GatewayError('overloaded', 'Overloaded') },
      finish(),
    ]);
    expect(frames).toEqual([
      messageStart(),
      blockStart(0, { type: 'tool_use', id: 'toolu_a', name: 'weather', input: {} }),
      stop(0),
      f({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ]);
  });

  it('finish length closes a still-open tool block; refusal carries stop_details', () => {
    const frames = run([start, { type: 'tool-start', id: 'a', toolCallId: 'toolu_a', name: 'w' }, { type: 'tool-delta', id: 'a', json: '{"ci' }, finish('length')]);
    expect(frames.slice(-3)).toEqual([stop(0), ...finishFrames('max_tokens')]);
    const details = { type: 'refusal', category: 'cyber', explanation: 'no' };
    const refused = run([start, finish('refusal', details)]);
    expect(refused.slice(-2)).toEqual(finishFrames('refusal', 1, { stop_details: details }));
    expectOfficial([...frames, ...refused]);
  });
});

/** Recorded Anthropic streams -> IR (as a provider decoder would) -> our encoder: content events must match the wire. */
describe.skipIf(!REFERENCE_PRESENT)('messages stream encoder against recorded Anthropic streams', () => {
  const dir = pathToFileURL(`${TRANSCRIPTS_DIR}/anthropic-messages/`);
  const events = (file: string) =>
    readFileSync(new URL(file, dir), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)) as Record<string, any>);

  function toIr(wire: Record<string, any>[]): StreamEvent[] {
    const kinds: Record<number, string> = {};
    const out: StreamEvent[] = [];
    for (const e of wire) {
      const id = `b${e.index}`;
      if (e.type === 'message_start') out.push({ type: 'start', id: e.message.id, model: e.message.model });
      if (e.type === 'content_block_start') {
        const b = e.content_block;
        kinds[e.index] = b.type === 'tool_use' ? 'tool' : b.type === 'text' ? 'text' : 'reasoning';
        if (b.type === 'text') out.push({ type: 'text-start', id });
        else if (b.type === 'thinking') out.push({ type: 'reasoning-start', id });
        else if (b.type === 'redacted_thinking') out.push({ type: 'reasoning-start', id, redacted: b.data });
        else out.push({ type: 'tool-start', id, toolCallId: b.id, name: b.name });
      }
      if (e.type === 'content_block_delta') {
        const d = e.delta;
        if (d.type === 'text_delta') out.push({ type: 'text-delta', id, text: d.text });
        if (d.type === 'thinking_delta') out.push({ type: 'reasoning-delta', id, text: d.thinking });
        if (d.type === 'signature_delta') out.push({ type: 'reasoning-signature', id, signature: d.signature });
        if (d.type === 'input_json_delta') out.push({ type: 'tool-delta', id, json: d.partial_json });
      }
      if (e.type === 'content_block_stop') out.push({ type: `${kinds[e.index]}-end` as 'text-end', id });
      if (e.type === 'message_delta') out.push({ type: 'finish', attempts: [], finish: { unified: e.delta.stop_reason === 'tool_use' ? 'tool-calls' : 'stop' }, usage: usage(0, e.usage.output_tokens) });
    }
    return out;
  }

  const contentEvents = (frames: { type: string; [k: string]: any }[]) =>
    frames
      .filter((e) => e.type.startsWith('content_block_'))
      // The wire sometimes carries empty input_json/thinking deltas; we never emit those.
      .filter((e) => !(e.delta?.partial_json === '' || e.delta?.thinking === ''))
      .map((e) => (e.content_block?.caller ? { ...e, content_block: { ...e.content_block, caller: undefined } } : e))
      .map((e) => JSON.parse(JSON.stringify(e)) as unknown);

  it.each(['stream-thinking.sse', 'stream-redacted-thinking.sse', 'stream-tool-use.sse', 'stream-tool-use-json-args.jsonl', 'stream-tool-use-empty-input.jsonl'])('%s', (file) => {
    const wire = file.endsWith('.jsonl')
      ? readFileSync(new URL(file, dir), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>)
      : events(file);
    const frames = run(toIr(wire)).map((x) => x.data as { type: string });
    expect(contentEvents(frames)).toEqual(contentEvents(wire as { type: string }[]));
    expect(frames.map((x) => x.type).filter((t) => t === 'message_start')).toHaveLength(1);
    expect(frames.at(-1)).toEqual({ type: 'message_stop' });
  });
});
