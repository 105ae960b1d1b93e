import { describe, expect, it } from 'vitest';
import type { Message, ReasoningPart, UpstreamEvent, TextPart, Tool, ToolCallPart } from '../../ir/index.js';
import { countRequestTokens, countTokens } from '../../util/tokenizer.js';
import { localProvider } from './index.js';
import { makeCall, makeRequest, run, schemaValidator } from '../../../test/support/local-call.js';
import { LATE_REFUSAL_PREFIX } from './plan-output.js';
import { REFUSAL_TRIGGER } from './read-conversation.js';
import { signerOf } from './sign-reasoning.js';

const weather: Tool = {
  name: 'get_weather',
  description: 'Get the current weather for a city',
  inputSchema: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer', minimum: 1, maximum: 7 },
      hourly: { type: 'boolean' },
    },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
};
const time: Tool = {
  name: 'get_time',
  description: 'Current local time in a timezone',
  inputSchema: { type: 'object', properties: { timezone: { type: 'string' } }, required: ['timezone'] },
};

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const texts = (content: unknown[]) => (content as TextPart[]).filter((p) => p.type === 'text').map((p) => p.text).join('');
const toolCalls = (content: unknown[]) => (content as ToolCallPart[]).filter((p) => p.type === 'tool-call');

describe('local provider: answers', () => {
  it('is deterministic: the same request gives the same events', async () => {
    const req = makeRequest({ system: [{ type: 'text', text: 'Be kind.' }], reasoning: { enabled: true, effort: 'low' } });
    const a = await run(makeCall(req));
    const b = await run(makeCall(structuredClone(req)));
    expect(b.events).toEqual(a.events);
    const other = await run(makeCall(makeRequest({ messages: [user('Something else entirely')] })));
    expect(texts(other.result.content)).not.toEqual(texts(a.result.content));
  });

  it('echoes the user, mentions the system prompt, and is 60-140 tokens long', async () => {
    const req = makeRequest({ system: [{ type: 'text', text: 'Answer like a pirate.' }], messages: [user('Where is the treasure?')] });
    const { result, events } = await run(makeCall(req));
    const text = texts(result.content);
    expect(text.startsWith('You said: "Where is the treasure?".')).toBe(true);
    expect(text).toContain('Answer like a pirate.');
    expect(result.usage.output.total).toBeGreaterThanOrEqual(60);
    expect(result.usage.output.total).toBeLessThanOrEqual(140);
    expect(result.finish).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(events.filter((e) => e.type === 'text-delta').length).toBe(result.usage.output.total);
  });

  it('reports exact usage: input by countRequestTokens, output by the tokenizer over the emitted text', async () => {
    const req = makeRequest({ messages: [user('Ünïcödé and emoji 🎉 and 日本語, please echo them back')] });
    const { result, events } = await run(makeCall(req));
    const start = events[0] as Extract<UpstreamEvent, { type: 'start' }>;
    expect(start.usage?.input.noCache).toBe(countRequestTokens(req));
    expect(result.usage.input.noCache).toBe(countRequestTokens(req));
    expect(result.usage.output.total).toBe(countTokens(texts(result.content)));
    expect(texts(result.content)).toContain('🎉');
  });

  it('answers from a tool result, naming the tool', async () => {
    const req = makeRequest({
      tools: [weather],
      messages: [
        user('What is the weather in Paris?'),
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'Sunny, 21 degrees' }] }] },
      ],
    });
    const { result } = await run(makeCall(req));
    expect(toolCalls(result.content)).toHaveLength(0);
    expect(texts(result.content)).toMatch(/^The get_weather tool returned: Sunny, 21 degrees\. /);
    expect(result.finish.unified).toBe('stop');
  });
});

describe('local provider: tool calls', () => {
  it('calls a mentioned tool with schema-valid arguments streamed in fragments', async () => {
    const req = makeRequest({ tools: [weather, time], messages: [user('What is the weather in Paris?')] });
    const { result, events } = await run(makeCall(req));
    const calls = toolCalls(result.content);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.name).toBe('get_weather');
    const args = JSON.parse(calls[0]?.arguments ?? '');
    expect(schemaValidator(weather.inputSchema)(args)).toBe(true);
    expect(args.city).toBe('Paris');
    const deltas = events.filter((e) => e.type === 'tool-delta');
    expect(deltas.length).toBeGreaterThan(4);
    expect(deltas.some((d) => d.json === '{"' || !/^[{}[\],:]/.test(d.json))).toBe(true);
    expect(texts(result.content)).toBe("I'll call get_weather.");
    expect(result.finish).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(calls[0]?.id).toMatch(/^toolu_local_[0-9a-f]{24}$/);
  });

  it('makes parallel calls with distinct ids derived from the request id', async () => {
    const req = makeRequest({ tools: [weather, time], messages: [user('Weather in Paris and the local time in Tokyo?')] });
    const { result } = await run(makeCall(req, { requestId: 'req_A' }));
    const calls = toolCalls(result.content);
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    expect(JSON.parse(calls[1]?.arguments ?? '')).toEqual({ timezone: 'Tokyo' });
    const again = await run(makeCall(req, { requestId: 'req_B' }));
    expect(toolCalls(again.result.content)[0]?.id).not.toBe(calls[0]?.id);
  });

  it('makes one call when parallel tool calls are off, none with tool_choice none', async () => {
    const ask = 'Weather in Paris and the local time in Tokyo?';
    const single = await run(makeCall(makeRequest({ tools: [weather, time], parallelToolCalls: false, messages: [user(ask)] })));
    expect(toolCalls(single.result.content).map((c) => c.name)).toEqual(['get_weather']);
    const none = await run(makeCall(makeRequest({ tools: [weather, time], toolChoice: { type: 'none' }, messages: [user(ask)] })));
    expect(toolCalls(none.result.content)).toHaveLength(0);
    expect(none.result.finish.unified).toBe('stop');
  });
});

describe('local provider: reasoning', () => {
  const reasoningOf = (content: unknown[]) => (content as ReasoningPart[]).find((p) => p.type === 'reasoning');

  it("takes back its own signed reasoning, from any local model, and refuses a changed text or signature", async () => {
    const first = await run(makeCall(makeRequest({ reasoning: { enabled: true } }), { upstreamModel: 'local-opus' }));
    const thought = reasoningOf(first.result.content)!;
    const turn = (part: ReasoningPart) =>
      makeRequest({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
          { role: 'assistant', content: [part, { type: 'text', text: 'Hello.' }] },
          { role: 'user', content: [{ type: 'text', text: 'Again?' }] },
        ],
      });
    // Answered by another local model, as after a fallback.
    await expect(run(makeCall(turn(thought), { upstreamModel: 'local-haiku' }))).resolves.toBeDefined();
    for (const bad of [{ ...thought, text: `${thought.text} ` }, { ...thought, signature: thought.signature!.replace(/^[^.]+/, 'eA') }]) {
      await expect(run(makeCall(turn(bad)))).rejects.toMatchObject({ kind: 'invalid_request', param: 'messages.1.content.0.signature' });
    }
  });

  it('thinks longer with higher effort, counts reasoning as output, and signs it', async () => {
    const lengths: number[] = [];
    for (const effort of ['low', 'medium', 'high'] as const) {
      const { result, events } = await run(makeCall(makeRequest({ reasoning: { enabled: true, effort } })));
      const r = reasoningOf(result.content);
      expect(r?.text.startsWith('Let me think about')).toBe(true);
      expect(events[1]?.type).toBe('reasoning-start');
      expect(signerOf(r?.text ?? '', r?.signature ?? '')).toBe('local-sonnet');
      expect(result.usage.output.reasoning).toBe(countTokens(r?.text ?? ''));
      expect(result.usage.output.total).toBe(result.usage.output.reasoning + countTokens(texts(result.content)));
      lengths.push(result.usage.output.reasoning);
    }
    expect(lengths[0]).toBeLessThan(lengths[1] as number);
    expect(lengths[1]).toBeLessThan(lengths[2] as number);
  });

  it('sizes reasoning to a quarter of budgetTokens', async () => {
    const { result } = await run(makeCall(makeRequest({ reasoning: { enabled: true, budgetTokens: 2000 } })));
    expect(result.usage.output.reasoning).toBeGreaterThanOrEqual(500);
    expect(result.usage.output.reasoning).toBeLessThan(530);
  });
});

describe('local provider: ceiling and stop sequences', () => {
  it('stops at exactly maxTokens with finish length, closing the open block', async () => {
    const { result, events } = await run(makeCall(makeRequest({ maxTokens: 10 })));
    expect(result.finish).toEqual({ unified: 'length', raw: 'max_tokens' });
    expect(result.usage.output.total).toBe(10);
    expect(countTokens(texts(result.content))).toBe(10);
    expect(events.at(-2)?.type).toBe('text-end');
  });

  it('counts reasoning toward the ceiling', async () => {
    const { result } = await run(makeCall(makeRequest({ maxTokens: 25, reasoning: { enabled: true, effort: 'high' } })));
    expect(result.finish.unified).toBe('length');
    expect(result.usage.output).toEqual({ total: 25, reasoning: 25 });
    expect(result.content.map((p) => p.type)).toEqual(['reasoning']);
  });

  it('cuts a tool call at the ceiling', async () => {
    const req = makeRequest({ maxTokens: 9, tools: [weather], messages: [user('What is the weather in Paris?')] });
    const { result } = await run(makeCall(req));
    expect(result.finish.unified).toBe('length');
    expect(result.usage.output.total).toBe(9);
    expect(toolCalls(result.content)).toHaveLength(1);
  });

  it('stops before a stop sequence', async () => {
    const req = makeRequest({ messages: [user('Say the magic word STOPHERE and more')], stopSequences: ['zzz', 'STOPHERE'] });
    const { result } = await run(makeCall(req));
    expect(texts(result.content)).toBe('You said: "Say the magic word ');
    expect(result.finish).toEqual({ unified: 'stop-sequence', raw: 'stop_sequence', stopSequence: 'STOPHERE' });
    expect(result.usage.output.total).toBe(countTokens('You said: "Say the magic word '));
  });
});

describe('local provider: refusals', () => {
  const refusalRequest = () =>
    makeRequest({ reasoning: { enabled: true }, messages: [user(`Please help. ${REFUSAL_TRIGGER}`)] });

  it('refuses before any output by default', async () => {
    const { events, result } = await run(makeCall(refusalRequest()));
    expect(events.map((e) => e.type)).toEqual(['start', 'finish']);
    expect(result.finish.unified).toBe('refusal');
    expect(result.finish.raw).toBe('refusal');
    expect(result.finish.details).toMatchObject({ type: 'refusal', category: null });
    expect(result.usage.output.total).toBe(0);
  });

  it('local-haiku has no refusal classifier: it answers the trigger (so the default chains end in an answer)', async () => {
    const { result } = await run(makeCall(refusalRequest(), { upstreamModel: 'local-haiku' }));
    expect(result.finish.unified).toBe('stop');
    expect(texts(result.content)).toContain('You said');
  });

  it('refuses after some output on a late-refusal model', async () => {
    const { result } = await run(makeCall(refusalRequest(), { upstreamModel: 'local-late-refusal' }));
    expect(texts(result.content)).toBe(LATE_REFUSAL_PREFIX);
    expect(result.finish.unified).toBe('refusal');
    expect(result.usage.output.total).toBe(countTokens(LATE_REFUSAL_PREFIX));
  });
});

describe('local provider: pacing and abort', () => {
  it('honours tokensPerSecond for a stream: 50 tokens at 1000 tok/s take at least 40 ms', async () => {
    const t0 = performance.now();
    const { result } = await run(makeCall(makeRequest({ maxTokens: 50, stream: true }), { tokensPerSecond: 1000 }));
    expect(result.usage.output.total).toBe(50);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(40);
  });

  // Paced, each of these would take about 100 s (500 tokens at 5 tok/s).
  it('generates a whole answer at once: no pacing unless the client streams', async () => {
    const t0 = performance.now();
    const request = makeRequest({ stream: false, maxTokens: 500, reasoning: { enabled: true, effort: 'high' } });
    const { result } = await run(makeCall(request, { upstreamModel: 'local-opus', tokensPerSecond: 5 }));
    expect(result.usage.output.reasoning).toBeGreaterThan(300);
    // The pipeline streams a long ceiling's call upstream; the client still asked for a whole answer.
    await run(makeCall({ ...request, stream: true }, { upstreamModel: 'local-opus', tokensPerSecond: 5, clientStreams: false }));
    expect(performance.now() - t0).toBeLessThan(20_000);
  });

  it('paces a whole answer when the model is set to (paceWholeAnswers)', async () => {
    const t0 = performance.now();
    await run(makeCall(makeRequest({ maxTokens: 50, stream: false }), { tokensPerSecond: 1000, paceWholeAnswers: true }));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(40);
  });

  it('stops within a few ms of an abort, with no further events', async () => {
    const ac = new AbortController();
    const events: UpstreamEvent[] = [];
    const iterator = localProvider.stream(makeCall(makeRequest({ stream: true }), { tokensPerSecond: 2, signal: ac.signal }))[Symbol.asyncIterator]();
    for (let i = 0; i < 3; i++) events.push((await iterator.next()).value as UpstreamEvent);
    // The next token is ~500 ms away; the abort must end that wait at once.
    const pending = iterator.next();
    setTimeout(() => ac.abort(), 5);
    const t0 = performance.now();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - t0).toBeLessThan(250);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(events.map((e) => e.type)).toEqual(['start', 'text-start', 'text-delta']);
  });

  it('yields nothing more after an abort even when no wait is pending', async () => {
    const ac = new AbortController();
    const seen: string[] = [];
    await expect(async () => {
      for await (const ev of localProvider.stream(makeCall(makeRequest(), { signal: ac.signal }))) {
        seen.push(ev.type);
        if (seen.length === 5) ac.abort(new Error('client gone'));
      }
    }).rejects.toThrow('client gone');
    expect(seen).toHaveLength(5);
  });

  it('throws at once for an already aborted signal', async () => {
    const iterator = localProvider.stream(makeCall(makeRequest(), { signal: AbortSignal.abort() }))[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toMatchObject({ name: 'AbortError' });
  });
});
