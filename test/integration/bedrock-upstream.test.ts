/**
 * A Bedrock upstream through the real gateway, with the official SDKs of the three client
 * protocols (openai chat, @anthropic-ai/sdk messages, openai Responses) against the fake upstream
 * speaking Bedrock's InvokeModel (binary event stream; every request's SigV4 signature verified
 * with the test credentials): streamed text, a parallel tool-call round trip, signed thinking
 * carried back to Bedrock, throttling and in-stream exceptions in each client's own shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { bedrockCatalog, TEST_AWS_CREDENTIALS, useTestAwsCredentials } from '../support/bedrock-catalog.js';
import { timeTool, weatherTool } from '../support/chat-tools.js';
import { useSdkGateway } from '../support/sdk-gateway.js';

const sdk = useSdkGateway((f) => ({ catalog: bedrockCatalog(f) }), { fake: { awsCredentials: TEST_AWS_CREDENTIALS }, setup: useTestAwsCredentials });

const TEXT = 'Switchyard signs every request to Bedrock.';
const THOUGHT = 'The user asks for the capital of France. It is Paris.';
const SIGNATURE = 'EqQBCkgIBRABGAIiQBedrockSignedThinkingForSwitchyardTests+/==';
const MODEL_PATH = '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0';
const sent = (i: number) => sdk.fake.requests[i].body as any;

describe('chat clients (openai SDK) -> Bedrock', () => {
  it('stream text with usage, from invoke-with-response-stream, signed', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-text');
    const stream = await sdk.openai.chat.completions.create({ model: 'bd', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(TEXT);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 9 });
    const req = sdk.fake.requests[0];
    expect(req.path).toBe(`${MODEL_PATH}/invoke-with-response-stream`);
    expect(req.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASWITCHYARDTEST01\/\d{8}\/eu-west-1\/bedrock\/aws4_request, /);
    expect(req.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] });
    expect(req.body).not.toHaveProperty('model');
    expect(req.body).not.toHaveProperty('stream');
  });

  it('round-trip parallel tool calls with their Bedrock ids', async () => {
    sdk.fake.script('script:bedrock/invoke-tool-use-parallel', 'script:bedrock/invoke-stream-text');
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const first = await sdk.openai.chat.completions.create({ model: 'bd', messages, tools: [weatherTool, timeTool] });
    const calls = first.choices[0].message.tool_calls!.filter((c) => c.type === 'function');
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([['toolu_bdrk_01Weather', 'get_weather', { location: 'Paris' }], ['toolu_bdrk_01Time', 'get_time', {}]]);
    expect(sdk.fake.requests[0].path).toBe(`${MODEL_PATH}/invoke`);
    expect(sent(0).tools.map((t: any) => t.name)).toEqual(['get_weather', 'get_time']);

    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: calls[1].id, content: '14:05' }, { role: 'tool', tool_call_id: calls[0].id, content: '18 C' });
    const second = await sdk.openai.chat.completions.create({ model: 'bd', messages, tools: [weatherTool, timeTool], stream: false });
    expect(second.choices[0].message.content).toBe(TEXT);
    const [, assistant, results] = sent(1).messages;
    expect(assistant.content.filter((b: any) => b.type === 'tool_use').map((b: any) => [b.id, b.input])).toEqual([['toolu_bdrk_01Weather', { location: 'Paris' }], ['toolu_bdrk_01Time', {}]]);
    expect(results.content.map((b: any) => [b.type, b.tool_use_id])).toEqual([['tool_result', 'toolu_bdrk_01Time'], ['tool_result', 'toolu_bdrk_01Weather']]);
  });

  it('stream thinking as reasoning_content with its signed block, which goes back to Bedrock byte for byte', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-thinking', 'script:bedrock/invoke-stream-text');
    const messages: any[] = [{ role: 'user', content: 'Capital of France?' }];
    const stream = await sdk.openai.chat.completions.create({ model: 'bd', stream: true, reasoning_effort: 'low', messages });
    let reasoning = '';
    let text = '';
    const blocks: any[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as any;
      reasoning += delta?.reasoning_content ?? '';
      text += delta?.content ?? '';
      blocks.push(...(delta?.thinking_blocks ?? []));
    }
    expect(reasoning).toBe(THOUGHT);
    expect(text).toBe('The capital of France is Paris.');
    expect(blocks).toEqual([{ type: 'thinking', thinking: THOUGHT, signature: SIGNATURE }]);
    expect(sent(0).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });

    messages.push({ role: 'assistant', content: text, thinking_blocks: blocks }, { role: 'user', content: 'Thanks!' });
    await sdk.openai.chat.completions.create({ model: 'bd', reasoning_effort: 'low', messages, stream: true }).then(async (s) => {
      for await (const _ of s) void _;
    });
    expect(sent(1).messages[1].content[0]).toEqual({ type: 'thinking', thinking: THOUGHT, signature: SIGNATURE });
  });

  it("Bedrock's 429 ThrottlingException reaches chat clients as a rate limit", async () => {
    sdk.fake.script('script:bedrock/error-429-throttling');
    const limited = await sdk.openai.chat.completions.create({ model: 'bd', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ message: 'Too many requests, please wait before trying again.', code: 'ThrottlingException' });
  });

  it('an exception frame after text is an in-stream error chunk', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-exception');
    const stream = await sdk.openai.chat.completions.create({ model: 'bd', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    const failure = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('Switchyard signs');
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(String((failure as Error).message)).toContain('Model stream error');
  });
});

describe('messages clients (@anthropic-ai/sdk) -> Bedrock', () => {
  it('stream text', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-text');
    const final = await sdk.anthropic.messages.stream({ model: 'bd', max_tokens: 300, messages: [{ role: 'user', content: 'Hello' }] }).finalMessage();
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: TEXT })]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 14, output_tokens: 9 });
    expect(sent(0).max_tokens).toBe(300);
  });

  it('round-trip parallel tool calls, streamed', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-tool-use-parallel', 'script:bedrock/invoke-stream-text');
    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ];
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather and time in Paris?' };
    const first = await sdk.anthropic.messages.stream({ model: 'bd', max_tokens: 300, tools, messages: [question] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => [u.id, u.name, u.input])).toEqual([['toolu_bdrk_01Weather', 'get_weather', { location: 'Paris' }], ['toolu_bdrk_01Time', 'get_time', {}]]);
    expect(first.usage).toMatchObject({ input_tokens: 50, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 42 });
    const results: Anthropic.ToolResultBlockParam[] = uses.map((u, i) => ({ type: 'tool_result', tool_use_id: u.id, content: `result ${i}` }));
    const second = await sdk.anthropic.messages.create({ model: 'bd', max_tokens: 300, tools, messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }], stream: false });
    expect(second.content).toMatchObject([{ type: 'text', text: TEXT }]);
    expect(sent(1).messages[2].content.map((b: any) => b.tool_use_id)).toEqual(['toolu_bdrk_01Weather', 'toolu_bdrk_01Time']);
  });

  it('stream signed thinking, and send the block back unchanged; betas go in the body', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-thinking', 'script:bedrock/invoke-stream-text');
    const question: Anthropic.MessageParam = { role: 'user', content: 'Capital of France?' };
    const final = await sdk.anthropic.messages
      .stream({ model: 'bd', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [question] }, { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } })
      .finalMessage();
    expect(final.content[0]).toEqual({ type: 'thinking', thinking: THOUGHT, signature: SIGNATURE });
    expect(sent(0)).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, anthropic_beta: ['interleaved-thinking-2025-05-14'] });
    await sdk.anthropic.messages.create({ model: 'bd', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [question, { role: 'assistant', content: final.content }, { role: 'user', content: 'Thanks!' }] });
    expect(sent(1).messages[1].content[0]).toEqual({ type: 'thinking', thinking: THOUGHT, signature: SIGNATURE });
  });

  it('a 429 comes back as rate_limit_error, a 400 ValidationException as invalid_request_error', async () => {
    sdk.fake.script('script:bedrock/error-429-throttling');
    const err = await sdk.anthropic.messages.create({ model: 'bd', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    sdk.fake.script('script:bedrock/error-400-validation');
    const bad = await sdk.anthropic.messages.create({ model: 'bd', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'invalid_request_error', message: 'The provided model identifier is invalid.' } });
  });

  it('a streamed exception frame after text is an error event', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-exception');
    const stream = sdk.anthropic.messages.stream({ model: 'bd', max_tokens: 300, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    stream.on('text', (t) => (text += t));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(text).toBe('Switchyard signs');
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain('Model stream error');
  });
});

describe('Responses clients (openai SDK) -> Bedrock', () => {
  it('stream text', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-text');
    const stream = await sdk.openai.responses.create({ model: 'bd', input: 'Hello', stream: true });
    let text = '';
    let last: any;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      last = ev;
    }
    expect(text).toBe(TEXT);
    expect(last.type).toBe('response.completed');
    expect(last.response.usage).toMatchObject({ input_tokens: 14, output_tokens: 9 });
  });

  it('round-trip parallel tool calls', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-tool-use-parallel', 'script:bedrock/invoke-stream-text');
    const tools = [weatherTool, timeTool].map((t) => ({ type: 'function' as const, name: t.function.name, parameters: t.function.parameters, strict: false }));
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const stream = await sdk.openai.responses.create({ model: 'bd', input, tools, stream: true });
    let final: any;
    for await (const ev of stream) if (ev.type === 'response.completed') final = ev.response;
    const calls = final.output.filter((o: any) => o.type === 'function_call');
    expect(calls.map((c: any) => [c.call_id, c.name, JSON.parse(c.arguments)])).toEqual([['toolu_bdrk_01Weather', 'get_weather', { location: 'Paris' }], ['toolu_bdrk_01Time', 'get_time', {}]]);
    const next = await sdk.openai.responses.create({
      model: 'bd',
      tools,
      input: [...input, ...final.output, ...calls.map((c: any, i: number) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `result ${i}` }))],
    });
    expect(next.output_text).toBe(TEXT);
    expect(sent(1).messages[2].content.map((b: any) => [b.tool_use_id, b.content])).toEqual([
      ['toolu_bdrk_01Weather', [{ type: 'text', text: 'result 0' }]],
      ['toolu_bdrk_01Time', [{ type: 'text', text: 'result 1' }]],
    ]);
  });

  it('stream thinking as a reasoning summary, its signature carried back in encrypted_content', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-thinking', 'script:bedrock/invoke-stream-text');
    const stream = await sdk.openai.responses.create({ model: 'bd', input: 'Capital of France?', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], stream: true });
    let summary = '';
    let final: any;
    for await (const ev of stream) {
      if (ev.type === 'response.reasoning_summary_text.delta') summary += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    expect(summary).toBe(THOUGHT);
    expect(final.output_text ?? final.output.at(-1).content[0].text).toBe('The capital of France is Paris.');
    await sdk.openai.responses.create({ model: 'bd', reasoning: { effort: 'low' }, input: [{ role: 'user', content: 'Capital of France?' }, ...final.output, { role: 'user', content: 'Thanks!' }] });
    expect(sent(1).messages[1].content[0]).toEqual({ type: 'thinking', thinking: THOUGHT, signature: SIGNATURE });
  });

  it('a 503 ServiceUnavailableException reaches Responses clients as a 503', async () => {
    sdk.fake.script('status:503');
    const down = await sdk.openai.responses.create({ model: 'bd', input: 'Hi' }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(OpenAI.InternalServerError);
    expect((down as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
  });
});

describe('every client protocol -> Bedrock Converse', () => {
  const NOVA_PATH = '/model/amazon.nova-pro-v1%3A0';

  it('chat: stream text from converse-stream', async () => {
    sdk.fake.script('script:bedrock/converse-stream-text');
    const stream = await sdk.openai.chat.completions.create({ model: 'nova', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Switchyard speaks Converse too.');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6 });
    expect(sdk.fake.requests[0].path).toBe(`${NOVA_PATH}/converse-stream`);
    expect(sent(0).messages).toEqual([{ role: 'user', content: [{ text: 'Hello' }] }]);
  });

  it('messages: round-trip parallel tool calls as toolUse and toolResult blocks', async () => {
    sdk.fake.script('script:bedrock/converse-stream-tool-use-parallel', 'script:bedrock/converse-stream-text');
    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ];
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather and time in Paris?' };
    const first = await sdk.anthropic.messages.stream({ model: 'nova', max_tokens: 300, tools, messages: [question] }).finalMessage();
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => [u.id, u.name, u.input])).toEqual([['tooluse_Weather01', 'get_weather', { location: 'Paris' }], ['tooluse_Time02', 'get_time', {}]]);
    expect(first.usage).toMatchObject({ input_tokens: 20, cache_read_input_tokens: 1000, output_tokens: 40 });
    const results: Anthropic.ToolResultBlockParam[] = uses.map((u, i) => ({ type: 'tool_result', tool_use_id: u.id, content: `result ${i}` }));
    const second = await sdk.anthropic.messages.create({ model: 'nova', max_tokens: 300, tools, messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }] });
    expect(second.content).toMatchObject([{ type: 'text', text: 'Switchyard speaks Converse too.' }]);
    expect(sent(1).messages[1].content.filter((b: any) => b.toolUse).map((b: any) => b.toolUse)).toEqual([
      { toolUseId: 'tooluse_Weather01', name: 'get_weather', input: { location: 'Paris' } },
      { toolUseId: 'tooluse_Time02', name: 'get_time', input: {} },
    ]);
    expect(sent(1).messages[2].content).toEqual([
      { toolResult: { toolUseId: 'tooluse_Weather01', content: [{ text: 'result 0' }] } },
      { toolResult: { toolUseId: 'tooluse_Time02', content: [{ text: 'result 1' }] } },
    ]);
    expect(sent(1).toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(['get_weather', 'get_time']);
  });

  it('Responses: stream Claude-on-Converse thinking as a summary; the signature goes back in reasoningContent', async () => {
    sdk.fake.script('script:bedrock/converse-stream-reasoning', 'script:bedrock/converse-stream-text');
    const stream = await sdk.openai.responses.create({ model: 'bdc', input: 'Capital of France?', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], stream: true });
    let summary = '';
    let final: any;
    for await (const ev of stream) {
      if (ev.type === 'response.reasoning_summary_text.delta') summary += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    expect(summary).toBe(THOUGHT);
    expect(sdk.fake.requests[0].path).toBe(`${MODEL_PATH}/converse-stream`);
    expect(sent(0).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    await sdk.openai.responses.create({ model: 'bdc', reasoning: { effort: 'low' }, input: [{ role: 'user', content: 'Capital of France?' }, ...final.output, { role: 'user', content: 'Thanks!' }] });
    expect(sent(1).messages[1].content[0]).toEqual({ reasoningContent: { reasoningText: { text: THOUGHT, signature: 'EqQBCkgIBRABGAIiQConverseSignedThinkingForSwitchyard+/==' } } });
  });

  it('messages: fields and betas a model that is not Anthropic cannot take are named in x-switchyard-warnings, streamed or not', async () => {
    // top_k is a field this SDK's types no longer list: a messages client's own field.
    const params = { model: 'nova', max_tokens: 300, top_k: 5, messages: [{ role: 'user' as const, content: 'Hello' }] };
    const options = { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } };
    const expected =
      'fields dropped (the upstream is not Anthropic): top_k; anthropic-beta dropped (the upstream is not Anthropic): context-1m-2025-08-07';
    sdk.fake.script('script:bedrock/converse-stream-text', 'script:bedrock/converse-stream-text');
    const whole = await sdk.anthropic.messages.create({ ...params, stream: false }, options).withResponse();
    expect(whole.data.content).toMatchObject([{ type: 'text', text: 'Switchyard speaks Converse too.' }]);
    expect(whole.response.headers.get('x-switchyard-warnings')).toBe(expected);
    const streamed = await sdk.anthropic.messages.create({ ...params, stream: true }, options).withResponse();
    let text = '';
    for await (const ev of streamed.data) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    expect(text).toBe('Switchyard speaks Converse too.');
    expect(streamed.response.headers.get('x-switchyard-warnings')).toBe(expected);
    expect(sent(1)).not.toHaveProperty('additionalModelRequestFields');
  });

  it('messages: Claude on Converse takes the fields and betas, so nothing is warned', async () => {
    sdk.fake.script('script:bedrock/converse-stream-text');
    const params = { model: 'bdc', max_tokens: 300, top_k: 5, messages: [{ role: 'user' as const, content: 'Hello' }] };
    const { response } = await sdk.anthropic.messages.create(params, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } }).withResponse();
    expect(response.headers.get('x-switchyard-warnings')).toBeNull();
    expect(sent(0).additionalModelRequestFields).toEqual({ top_k: 5, anthropic_beta: ['context-1m-2025-08-07'] });
  });

  it('chat: a JSON-schema response format and tool_choice none with tool calls in the history are warned', async () => {
    sdk.fake.script('script:bedrock/converse-stream-text');
    const { response } = await sdk.openai.chat.completions
      .create({
        model: 'nova',
        tool_choice: 'none',
        tools: [weatherTool],
        response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object', properties: { city: { type: 'string' } } } } },
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '18 C' },
        ],
      })
      .withResponse();
    expect(response.headers.get('x-switchyard-warnings')).toBe(
      'JSON schema response format dropped (the upstream has no structured output): city; tool_choice none not enforced (the upstream has no none choice; the tools in the history must be declared, so the model may call one)',
    );
    expect(sent(0).toolConfig).toEqual({ tools: [expect.objectContaining({ toolSpec: expect.objectContaining({ name: 'get_weather' }) })] });
  });

  it('chat: a throttlingException frame after text is an in-stream error', async () => {
    sdk.fake.script('script:bedrock/converse-stream-exception');
    const stream = await sdk.openai.chat.completions.create({ model: 'nova', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    const failure = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('Switchyard speaks');
    expect(failure).toBeInstanceOf(OpenAI.APIError);
  });
});
