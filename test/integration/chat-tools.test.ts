/**
 * Tool calls on /v1/chat/completions through the official `openai` SDK: a full round trip
 * (call, result, answer) with and without streaming, and the SDK's runTools helper. The local
 * models call a tool when the last user message names it.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, checkChatStream, recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1) });
});
afterAll(async () => gw?.close());

function client() {
  const rec = recordingFetch();
  return { oa: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 }), rec };
}

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Please use get_weather for Paris' }];

describe('chat completions: tools', () => {
  it('calls a tool, takes its result and answers (non-streaming)', async () => {
    const { oa } = client();
    const first = await oa.chat.completions.create({ model: 'local-haiku', messages: ask, tools });
    expect(await bodyErrors('createChatCompletion', 200, first)).toEqual([]);
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.type).toBe('function');
    expect(call.id).toBeTruthy();
    expect(call.function.name).toBe('get_weather');
    expect(typeof JSON.parse(call.function.arguments).city).toBe('string');

    const second = await oa.chat.completions.create({
      model: 'local-haiku',
      tools,
      messages: [...ask, choice.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 24 degrees' }],
    });
    expect(await bodyErrors('createChatCompletion', 200, second)).toEqual([]);
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toContain('Sunny, 24 degrees');
    expect(second.choices[0]!.message.tool_calls ?? []).toEqual([]);
  });

  it('streams tool calls as delta.tool_calls fragments with an index, then finish_reason tool_calls', async () => {
    const { oa, rec } = client();
    const stream = await oa.chat.completions.create({ model: 'local-haiku', messages: ask, tools, stream: true });
    for await (const _ of stream);
    const wire = await checkChatStream(await rec.last().text());
    expect(wire.finishReason).toBe('tool_calls');
    expect(wire.toolCalls).toHaveLength(1);
    expect(wire.toolCalls[0]!.name).toBe('get_weather');
    expect(typeof JSON.parse(wire.toolCalls[0]!.arguments).city).toBe('string');

    const call = wire.toolCalls[0]!;
    const answer = await oa.chat.completions.create({
      model: 'local-haiku',
      tools,
      stream: true,
      messages: [
        ...ask,
        { role: 'assistant', content: wire.text || null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
        { role: 'tool', tool_call_id: call.id, content: 'Rain all day' },
      ],
    });
    for await (const _ of answer);
    const done = await checkChatStream(await rec.last().text());
    expect(done.finishReason).toBe('stop');
    expect(done.text).toContain('Rain all day');
  });

  it('runs a tool loop with the SDK runTools helper', async () => {
    const { oa } = client();
    const seen: unknown[] = [];
    const runner = oa.chat.completions.runTools({
      model: 'local-haiku',
      messages: ask,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            parse: JSON.parse,
            function: (args: unknown) => {
              seen.push(args);
              return 'Foggy, 12 degrees';
            },
          },
        },
      ],
    });
    const content = await runner.finalContent();
    expect(seen).toHaveLength(1);
    expect(content).toContain('Foggy, 12 degrees');
  });

  it('does not call a tool the user did not name', async () => {
    const { oa } = client();
    const res = await oa.chat.completions.create({ model: 'local-haiku', messages: [{ role: 'user', content: 'Just say hi' }], tools });
    expect(res.choices[0]!.finish_reason).toBe('stop');
  });
});
