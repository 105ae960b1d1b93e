/**
 * Tool use on /v1/messages through the official `@anthropic-ai/sdk`: a full round trip (tool_use,
 * tool_result, answer) with and without streaming. The local models call a tool when the last
 * user message names it.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, checkMessagesStream, recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1) });
});
afterAll(async () => gw?.close());

function client() {
  const rec = recordingFetch();
  return { an: new Anthropic({ baseURL: gw.url, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 }), rec };
}

const tools: Anthropic.Tool[] = [
  {
    name: 'get_weather',
    description: 'Current weather of a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const ask: Anthropic.MessageParam[] = [{ role: 'user', content: 'Please use get_weather for Paris' }];
const textOf = (m: Anthropic.Message) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');

describe('messages: tools', () => {
  it('answers with a tool_use block and stop_reason tool_use, then answers from the tool_result', async () => {
    const { an } = client();
    const first = await an.messages.create({ model: 'local-haiku', max_tokens: 1000, tools, messages: ask });
    expect(await bodyErrors('createMessage', 200, first)).toEqual([]);
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(use.name).toBe('get_weather');
    expect(use.id).toBeTruthy();
    expect(typeof (use.input as { city: unknown }).city).toBe('string');

    const second = await an.messages.create({
      model: 'local-haiku',
      max_tokens: 1000,
      tools,
      messages: [
        ...ask,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 24 degrees' }] },
      ],
    });
    expect(await bodyErrors('createMessage', 200, second)).toEqual([]);
    expect(second.stop_reason).toBe('end_turn');
    expect(textOf(second)).toContain('Sunny, 24 degrees');
  });

  it('streams tool input as input_json_delta and works with the SDK stream helper', async () => {
    const { an, rec } = client();
    const final = await an.messages.stream({ model: 'local-haiku', max_tokens: 1000, tools, messages: ask }).finalMessage();
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.stopReason).toBe('tool_use');
    expect(wire.blocks.map((b) => b.type)).toEqual(['text', 'tool_use']);
    expect(wire.events.some((e) => e.delta?.type === 'input_json_delta')).toBe(true);
    // The tool_use block opens with an empty input; the input arrives only as deltas.
    expect(wire.events.find((e) => e.content_block?.type === 'tool_use').content_block.input).toEqual({});
    expect(wire.blocks).toEqual(final.content);
    const use = final.content[1] as Anthropic.ToolUseBlock;

    const answer = await an.messages
      .stream({
        model: 'local-haiku',
        max_tokens: 1000,
        tools,
        messages: [
          ...ask,
          { role: 'assistant', content: final.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'Rain all day' }] }] },
        ],
      })
      .finalMessage();
    const done = await checkMessagesStream(await rec.last().text());
    expect(done.stopReason).toBe('end_turn');
    expect(textOf(answer)).toContain('Rain all day');
  });

  it('reports a failed tool (is_error) in the answer', async () => {
    const { an } = client();
    const res = await an.messages.create({
      model: 'local-haiku',
      max_tokens: 1000,
      tools,
      messages: [
        ...ask,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'service down' }] },
      ],
    });
    expect(res.stop_reason).toBe('end_turn');
    expect(textOf(res)).toContain('service down');
  });

  it('a server tool a local model cannot run is dropped and reported in x-switchyard-warnings', async () => {
    const { an } = client();
    const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 1 } as unknown as Anthropic.Tool;
    const { data, response } = await an.messages.create({ model: 'local-haiku', max_tokens: 200, tools: [...tools, webSearch], messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(data.stop_reason).toBe('end_turn');
    expect(response.headers.get('x-switchyard-warnings')).toBe('server tools dropped (the upstream is not Anthropic): web_search_20250305');
  });

  it("the Anthropic SDK's tool runner runs a tool and finishes (no iterations count without a fallback)", async () => {
    const { an } = client();
    const calls: unknown[] = [];
    const final = await an.beta.messages
      .toolRunner({
        model: 'local-sonnet',
        max_tokens: 500,
        messages: ask,
        tools: [{ ...tools[0], type: 'custom', run: async (input: unknown) => (calls.push(input), 'sunny, 21 C') } as any],
      })
      .runUntilDone();
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(JSON.stringify(final.content)).toContain('sunny, 21 C');
  });

  it('message threads are a 400 naming thread, on which the SDK\'s tool runner resends the whole conversation every turn', async () => {
    // The request bodies the SDK sends, and the status of each answer.
    const sent: Array<{ body: any; status: number }> = [];
    const capture: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      sent.push({ body: JSON.parse(String(init?.body)), status: res.status });
      return res;
    };
    const an = new Anthropic({ baseURL: gw.url, apiKey: gw.key, fetch: capture, maxRetries: 0 });
    const final = await an.beta.messages
      .toolRunner({
        model: 'local-sonnet',
        max_tokens: 500,
        messages: ask,
        tools: [{ ...tools[0], type: 'custom', run: async () => 'sunny, 21 C' } as any],
      })
      .runUntilDone();
    expect(final.stop_reason).toBe('end_turn');
    // The first turn asked for a thread and was refused; from then on every turn carries the full history.
    expect(sent.map((s) => [s.status, s.body.thread?.type ?? null, s.body.messages.length])).toEqual([
      [400, 'create', 1],
      [200, null, 1],
      [200, null, 3],
    ]);
    expect(sent[2].body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);

    const err = await an.beta.messages
      .create({ model: 'local-sonnet', max_tokens: 50, messages: ask, thread: { type: 'continue', previous_message_id: 'msg_123' } } as any)
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.ThreadUnsupportedRequestError);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', details: { error_code: 'thread_unsupported_request', unsupported: ['thread'] } } });
    expect(err.error.error.message).toMatch(/^thread: /);
    expect(await bodyErrors('createMessage', 400, err.error)).toEqual([]);
  });
});
