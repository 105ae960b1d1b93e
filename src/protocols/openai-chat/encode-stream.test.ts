import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../ir/errors.js';
import type { StreamEvent } from '../../ir/stream.js';
import { encodeAll, testMeta, usage } from '../../../test/support/encoder-fixtures.js';
import { validateOfficial, withoutSwitchyardExtensions } from '../../../test/support/official-schemas.js';
import { chatStream, initChatStream } from './encode-stream.js';
import { REFERENCE_PRESENT, TRANSCRIPTS_DIR } from '../../../tools/reference.js';
import { pathToFileURL } from 'node:url';

const run = (events: StreamEvent[], includeUsage = false) => encodeAll(chatStream, initChatStream(testMeta({ includeUsage })), events);
const head = (model = 'model-a') => ({ id: 'chatcmpl-req1', object: 'chat.completion.chunk', created: 1700000000, model });
const c = (delta: Record<string, unknown>, finish: string | null = null, model?: string) => ({
  data: { ...head(model), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] },
});
const DONE = { data: '[DONE]' };
const start: StreamEvent = { type: 'start', id: 'up', model: 'model-a' };
const stop = (unified: 'stop' | 'length' | 'tool-calls' = 'stop'): StreamEvent => ({ type: 'finish', attempts: [], finish: { unified }, usage: usage(10, 5) });

function expectOfficial(frames: ReturnType<typeof run>) {
  for (const f of frames) {
    if (typeof f.data === 'string' || 'error' in f.data) continue;
    expect(validateOfficial('openai', 'CreateChatCompletionStreamResponse', withoutSwitchyardExtensions(f.data)), JSON.stringify(f.data)).toEqual([]);
  }
}

describe('chat stream encoder', () => {
  it('text: role chunk, content deltas (no empty ones), finish, usage chunk, [DONE]', () => {
    const frames = run(
      [start, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', text: 'Hel' }, { type: 'text-delta', id: 't', text: '' }, { type: 'text-delta', id: 't', text: 'lo' }, { type: 'text-end', id: 't' }, stop()],
      true,
    );
    expect(frames).toEqual([
      c({ role: 'assistant', content: '' }),
      c({ content: 'Hel' }),
      c({ content: 'lo' }),
      c({}, 'stop'),
      {
        data: {
          ...head(),
          choices: [],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
        },
      },
      DONE,
    ]);
    expect(frames.every((f) => !('event' in f))).toBe(true);
    expectOfficial(frames);
  });

  it('reasoning with signature, then text; redacted reasoning as thinking_blocks', () => {
    const frames = run([
      start,
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', text: 'Let me ' },
      { type: 'reasoning-delta', id: 'r', text: 'think' },
      { type: 'reasoning-signature', id: 'r', signature: 'EqQB+/==' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'reasoning-start', id: 'x', redacted: 'opaque' },
      { type: 'reasoning-end', id: 'x' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', text: 'Answer' },
      { type: 'text-end', id: 't' },
      stop(),
    ]);
    expect(frames).toEqual([
      c({ role: 'assistant', content: '' }),
      c({ reasoning_content: 'Let me ' }),
      c({ reasoning_content: 'think' }),
      // The whole signed block in one delta, ready to send back.
      c({ thinking_blocks: [{ type: 'thinking', thinking: 'Let me think', signature: 'EqQB+/==' }] }),
      c({ thinking_blocks: [{ type: 'redacted_thinking', data: 'opaque' }] }),
      c({ content: 'Answer' }),
      c({}, 'stop'),
      DONE,
    ]);
    expectOfficial(frames);
  });

  it('parallel interleaved tool calls keep their indexes; empty fragments are skipped', () => {
    const frames = run([
      start,
      { type: 'tool-start', id: 'a', toolCallId: 'call_a', name: 'weather' },
      { type: 'tool-start', id: 'b', toolCallId: 'call_b', name: 'now' },
      { type: 'tool-delta', id: 'a', json: '{"city":' },
      { type: 'tool-delta', id: 'b', json: '' },
      { type: 'tool-delta', id: 'a', json: '"Paris"}' },
      { type: 'tool-end', id: 'b' },
      { type: 'tool-end', id: 'a' },
      stop('tool-calls'),
    ]);
    expect(frames).toEqual([
      c({ role: 'assistant', content: '' }),
      c({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      c({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'now', arguments: '' } }] }),
      c({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      c({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      c({}, 'tool_calls'),
      DONE,
    ]);
    expectOfficial(frames);
  });

  it('fallback mid-stream: extension chunk, later chunks name the new model', () => {
    const frames = run([
      start,
      { type: 'fallback', from: 'model-a', to: 'model-b', reason: 'refusal', outcome: 'refusal' },
      { type: 'start', id: 'up2', model: 'model-b' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', text: 'Hi' },
      { type: 'text-end', id: 't' },
      stop(),
    ]);
    expect(frames).toEqual([
      c({ role: 'assistant', content: '' }),
      { data: { ...c({}, null, 'model-b').data, switchyard: { fallback: { from: 'model-a', to: 'model-b', reason: 'refusal', outcome: 'refusal' } } } },
      c({ content: 'Hi' }, null, 'model-b'),
      c({}, 'stop', 'model-b'),
      DONE,
    ]);
    expectOfficial(frames);
  });

  it('error mid-stream: error frame then [DONE], later events ignored', () => {
    const frames = run([
      start,
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', text: 'partial' },
      { type: 'error', attempts: [], error: new GatewayError('overloaded', 'upstream overloaded') },
      stop(),
    ]);
    expect(frames).toEqual([
      c({ role: 'assistant', content: '' }),
      c({ content: 'partial' }),
      { data: { error: { message: 'upstream overloaded', type: 'server_error', param: null, code: 'overloaded' } } },
      DONE,
    ]);
  });

  it('finish length, no usage chunk without include_usage', () => {
    const frames = run([start, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', text: 'a' }, stop('length')]);
    expect(frames.slice(-2)).toEqual([c({}, 'length'), DONE]);
    expect(frames).toHaveLength(4);
  });

  it('emits the role chunk even when the first event is content (no start)', () => {
    expect(run([{ type: 'text-delta', id: 't', text: 'x' }]).map((f) => f.data)).toEqual([c({ role: 'assistant', content: '' }).data, c({ content: 'x' }).data]);
  });
});

/** Recorded OpenAI chat streams -> IR (as a provider decoder would) -> our encoder: the deltas must match the wire. */
describe.skipIf(!REFERENCE_PRESENT)('chat stream encoder against recorded OpenAI streams', () => {
  const dir = pathToFileURL(`${TRANSCRIPTS_DIR}/openai-chat/`);
  type Chunk = { choices: { delta: Record<string, any>; finish_reason: string | null }[]; usage?: Record<string, any> };
  const chunks = (file: string) =>
    readFileSync(new URL(file, dir), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('data:') && !l.includes('[DONE]'))
      .map((l) => JSON.parse(l.slice(5)) as Chunk);

  function toIr(wire: Chunk[]): StreamEvent[] {
    const out: StreamEvent[] = [{ type: 'start', id: 'up', model: 'model-a' }];
    for (const ch of wire) {
      const choice = ch.choices[0];
      if (!choice) continue;
      const d = choice.delta;
      if (typeof d.content === 'string' && d.content !== '') out.push({ type: 'text-delta', id: 't', text: d.content });
      for (const tc of d.tool_calls ?? []) {
        if (tc.id) out.push({ type: 'tool-start', id: `k${tc.index}`, toolCallId: tc.id, name: tc.function.name });
        if (tc.function?.arguments) out.push({ type: 'tool-delta', id: `k${tc.index}`, json: tc.function.arguments });
      }
      if (choice.finish_reason) {
        const unified = choice.finish_reason === 'tool_calls' ? 'tool-calls' : choice.finish_reason === 'length' ? 'length' : 'stop';
        out.push({ type: 'finish', attempts: [], finish: { unified }, usage: usage(0, 0) });
      }
    }
    return out;
  }

  // Compare what a client reads: each chunk's delta (minus null/empty noise) and finish_reason.
  const view = (ch: Chunk) => {
    const c0 = ch.choices[0];
    const delta = Object.fromEntries(Object.entries(c0.delta).filter(([, v]) => v !== null));
    return { delta, finish: c0.finish_reason };
  };

  it.each(['stream-tool-calls-parallel.sse', 'stream-tool-call-single.sse', 'stream-text.sse', 'stream-finish-length.sse'])('%s', (file) => {
    const wire = chunks(file).filter((c) => c.choices.length > 0);
    const frames = run(toIr(wire));
    const ours = frames.filter((x) => typeof x.data !== 'string').map((x) => view(x.data as unknown as Chunk));
    // We always open with a bare role chunk; OpenAI sometimes puts the first tool call in it too.
    const [first, ...rest] = wire.map(view);
    const { role, content: _c, ...firstRest } = first.delta;
    const expected = [{ delta: { role, content: '' }, finish: null }, ...(Object.keys(firstRest).length ? [{ ...first, delta: firstRest }] : []), ...rest];
    expect(ours).toEqual(expected);
    expect(frames.at(-1)).toEqual(DONE);
  });
});
