/**
 * Every provider of the table (test/support/provider-table.ts) × every client protocol (openai
 * chat, @anthropic-ai/sdk messages, openai Responses: the official SDKs) × every scenario
 * (streamed text, a parallel tool-call round trip, thinking carried back, a rate limit), through
 * the real gateway against the fake upstream speaking each provider's wire. What only one
 * provider does (Converse's warnings, Gemini's safety refusals, a refused service account, ...)
 * follows the table, one block per provider.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import { TEST_AWS_CREDENTIALS, useTestAwsCredentials } from '../support/bedrock-catalog.js';
import { timeTool, weatherTool } from '../support/chat-tools.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { PROVIDER_TABLE, type CatalogDocument } from '../support/provider-table.js';
import { useSdkGateway } from '../support/sdk-gateway.js';

const sdk = useSdkGateway(
  (fake) => {
    const doc = fakeCatalogDocument(fake, { maxRetries: 0 }) as CatalogDocument;
    for (const row of PROVIDER_TABLE) row.catalog(fake, doc);
    return { catalog: buildCatalog(doc, { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'provider table') };
  },
  { fake: { awsCredentials: TEST_AWS_CREDENTIALS }, setup: useTestAwsCredentials },
);

const sent = (i: number) => sdk.fake.requests[i].body as any;
const anthropicTools: Anthropic.Tool[] = [
  { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
  { name: 'get_time', input_schema: { type: 'object', properties: {} } },
];
const responsesTools = [weatherTool, timeTool].map((t) => ({ type: 'function' as const, name: t.function.name, parameters: t.function.parameters, strict: false }));
const CALLS: [[string, unknown], [string, unknown]] = [['get_weather', { location: 'Paris' }], ['get_time', {}]];
/** The signatures a client must see: the row's one, or none for unsigned reasoning. */
const signatures = (expected: string | RegExp | undefined) => (expected === undefined ? [] : [typeof expected === 'string' ? expected : expect.stringMatching(expected)]);

describe.each(PROVIDER_TABLE)('chat clients (openai SDK) -> $name', (row) => {
  it('stream text with usage', async () => {
    sdk.fake.script(row.text.script);
    const stream = await sdk.openai.chat.completions.create({ model: row.model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(row.text.answer);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: row.text.usage.input, completion_tokens: row.text.usage.output });
    expect(sdk.fake.requests[0].path).toBe(row.streamPath);
    row.checkRequest(sdk.fake.requests[0]);
    row.prompt?.(sent(0));
  });

  it('round-trip parallel tool calls (results sent in another order than the calls)', async () => {
    sdk.fake.script(row.tools.script, row.text.script);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const first = await sdk.openai.chat.completions.create({ model: row.model, messages, tools: [weatherTool, timeTool] });
    const calls = first.choices[0].message.tool_calls!.filter((c) => c.type === 'function');
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments || '{}')])).toEqual(row.tools.calls ?? CALLS);
    if (row.tools.ids) expect(calls.map((c) => c.id)).toEqual(row.tools.ids);
    else expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    if (row.tools.hidden) expect(JSON.stringify(first.choices[0].message)).not.toContain(row.tools.hidden);
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: calls[1].id, content: '14:05' }, { role: 'tool', tool_call_id: calls[0].id, content: '18 C' });
    const second = await sdk.openai.chat.completions.create({ model: row.model, messages, tools: [weatherTool, timeTool] });
    expect(second.choices[0].message.content).toBe(row.text.answer);
    const [a, b] = (row.tools.calls ?? CALLS).map((c) => c[0]);
    expect(row.tools.results(sent(1))).toEqual([[b, '14:05'], [a, '18 C']]);
    row.tools.checkCalls?.(sent(1));
  });

  it('stream thinking as reasoning_content, its signature in thinking_blocks, carried back', async () => {
    const model = row.thinking.model ?? row.model;
    sdk.fake.script(row.thinking.script, row.text.script);
    const messages: any[] = [{ role: 'user', content: 'Capital of France?' }];
    const stream = await sdk.openai.chat.completions.create({ model, stream: true, reasoning_effort: 'low', messages });
    let reasoning = '';
    let text = '';
    const blocks: any[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as any;
      reasoning += delta?.reasoning_content ?? '';
      text += delta?.content ?? '';
      blocks.push(...(delta?.thinking_blocks ?? []));
    }
    expect(reasoning).toBe(row.thinking.thought);
    expect(text).toBe(row.thinking.answer);
    expect(blocks.map((b) => b.signature).filter(Boolean)).toEqual(signatures(row.thinking.signature));
    row.thinking.asked(sent(0), 1024);
    if (!row.thinking.carriedBack) return;
    messages.push({ role: 'assistant', content: text, thinking_blocks: blocks }, { role: 'user', content: 'Thanks!' });
    await sdk.openai.chat.completions.create({ model, reasoning_effort: 'low', messages });
    row.thinking.carriedBack(sent(1));
  });

  it("a 429 reaches chat clients as a RateLimitError", async () => {
    sdk.fake.script(row.rateLimit.script);
    const limited = await sdk.openai.chat.completions.create({ model: row.model, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    if (row.rateLimit.code) expect((limited as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: row.rateLimit.code });
  });
});

describe.each(PROVIDER_TABLE)('messages clients (@anthropic-ai/sdk) -> $name', (row) => {
  it('stream text', async () => {
    sdk.fake.script(row.text.script);
    const final = await sdk.anthropic.messages.stream({ model: row.model, max_tokens: 300, messages: [{ role: 'user', content: 'Hello' }] }).finalMessage();
    expect(final.content).toMatchObject([{ type: 'text', text: row.text.answer }]);
    expect(final.content).toHaveLength(1);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ output_tokens: row.text.usage.output });
    expect(sdk.fake.requests[0].path).toBe(row.streamPath);
    expect(row.ceiling(sent(0))).toBe(300);
  });

  it('round-trip parallel tool calls, streamed', async () => {
    sdk.fake.script(row.tools.script, row.text.script);
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather and time in Paris?' };
    const first = await sdk.anthropic.messages.stream({ model: row.model, max_tokens: 300, tools: anthropicTools, messages: [question] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => [u.name, u.input])).toEqual(row.tools.calls ?? CALLS);
    if (row.tools.ids) expect(uses.map((u) => u.id)).toEqual(row.tools.ids);
    if (row.tools.usage) expect(first.usage).toMatchObject(row.tools.usage);
    const results: Anthropic.ToolResultBlockParam[] = uses.map((u, i) => ({ type: 'tool_result', tool_use_id: u.id, content: `result ${i}` }));
    const second = await sdk.anthropic.messages.create({ model: row.model, max_tokens: 300, tools: anthropicTools, messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }] });
    expect(second.content).toMatchObject([{ type: 'text', text: row.text.answer }]);
    expect(row.tools.results(sent(1))).toEqual((row.tools.calls ?? CALLS).map((c, i) => [c[0], `result ${i}`]));
    row.tools.checkCalls?.(sent(1));
  });

  it('stream thinking as a thinking block, and send it back', async () => {
    const model = row.thinking.model ?? row.model;
    sdk.fake.script(row.thinking.script, row.text.script);
    const question: Anthropic.MessageParam = { role: 'user', content: 'Capital of France?' };
    const params = { model, max_tokens: 4000, thinking: { type: 'enabled' as const, budget_tokens: 2048 } };
    const final = await sdk.anthropic.messages.stream({ ...params, messages: [question] }).finalMessage();
    const thinking = final.content.filter((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
    expect(thinking.map((b) => b.thinking).join('')).toBe(row.thinking.thought);
    expect(thinking.map((b) => b.signature).filter(Boolean)).toEqual(signatures(row.thinking.signature));
    expect(final.content.at(-1)).toMatchObject({ type: 'text', text: row.thinking.answer });
    row.thinking.asked(sent(0), 2048);
    expect(row.ceiling(sent(0))).toBe(4000);
    if (!row.thinking.carriedBack) return;
    await sdk.anthropic.messages.create({ ...params, messages: [question, { role: 'assistant', content: final.content }, { role: 'user', content: 'Thanks!' }] });
    row.thinking.carriedBack(sent(1));
  });

  it('a 429 comes back as rate_limit_error', async () => {
    sdk.fake.script(row.rateLimit.script);
    const err = await sdk.anthropic.messages.create({ model: row.model, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });
});

describe.each(PROVIDER_TABLE)('Responses clients (openai SDK) -> $name', (row) => {
  it('stream text', async () => {
    sdk.fake.script(row.text.script);
    const stream = await sdk.openai.responses.create({ model: row.model, input: 'Hello', stream: true });
    let text = '';
    let last: any;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      last = ev;
    }
    expect(text).toBe(row.text.answer);
    expect(last.type).toBe('response.completed');
    expect(last.response.usage).toMatchObject({ input_tokens: row.text.usage.input, output_tokens: row.text.usage.output });
  });

  it('round-trip parallel tool calls', async () => {
    sdk.fake.script(row.tools.script, row.text.script);
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const stream = await sdk.openai.responses.create({ model: row.model, input, tools: responsesTools, include: ['reasoning.encrypted_content'], stream: true });
    let final: any;
    for await (const ev of stream) if (ev.type === 'response.completed') final = ev.response;
    const calls = final.output.filter((o: any) => o.type === 'function_call');
    expect(calls.map((c: any) => [c.name, JSON.parse(c.arguments || '{}')])).toEqual(row.tools.calls ?? CALLS);
    if (row.tools.ids) expect(calls.map((c: any) => c.call_id)).toEqual(row.tools.ids);
    if (row.tools.hidden) expect(final.output.find((o: any) => o.type === 'reasoning')?.encrypted_content).toMatch(/^swy1\./);
    const outputs = calls.map((c: any, i: number) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `result ${i}` }));
    const next = await sdk.openai.responses.create({ model: row.model, tools: responsesTools, input: [...input, ...final.output, ...outputs] });
    expect(next.output_text).toBe(row.text.answer);
    expect(row.tools.results(sent(1))).toEqual((row.tools.calls ?? CALLS).map((c, i) => [c[0], `result ${i}`]));
    row.tools.checkCalls?.(sent(1));
  });

  it('stream thinking as a reasoning summary, carried back in encrypted_content', async () => {
    const model = row.thinking.model ?? row.model;
    sdk.fake.script(row.thinking.script, row.text.script);
    const stream = await sdk.openai.responses.create({ model, input: 'Capital of France?', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], stream: true });
    let summary = '';
    let text = '';
    let final: any;
    for await (const ev of stream) {
      if (ev.type === 'response.reasoning_summary_text.delta') summary += ev.delta;
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    expect(summary).toBe(row.thinking.thought);
    expect(text).toBe(row.thinking.answer);
    row.thinking.asked(sent(0), 1024);
    if (!row.thinking.carriedBack) return;
    await sdk.openai.responses.create({ model, reasoning: { effort: 'low' }, input: [{ role: 'user', content: 'Capital of France?' }, ...final.output, { role: 'user', content: 'Thanks!' }] });
    row.thinking.carriedBack(sent(1));
  });

  it('a 429 reaches Responses clients as a RateLimitError', async () => {
    sdk.fake.script(row.rateLimit.script);
    const limited = await sdk.openai.responses.create({ model: row.model, input: 'Hi' }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
  });
});

describe('what only Bedrock does', () => {
  const INVOKE_PATH = '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke';

  it('a whole answer comes from InvokeModel, the tools in Anthropic form', async () => {
    sdk.fake.script('script:bedrock/invoke-tool-use-parallel');
    const first = await sdk.openai.chat.completions.create({ model: 'bd', messages: [{ role: 'user', content: 'Weather and time in Paris?' }], tools: [weatherTool, timeTool] });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(sdk.fake.requests[0].path).toBe(INVOKE_PATH);
    expect(sent(0).tools.map((t: any) => t.name)).toEqual(['get_weather', 'get_time']);
  });

  it('an exception frame after text is an in-stream error: a chat chunk, a messages error event', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-exception');
    const stream = await sdk.openai.chat.completions.create({ model: 'bd', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    const failure = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('Switchyard signs');
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(String((failure as Error).message)).toContain('Model stream error');

    sdk.fake.script('script:bedrock/invoke-stream-exception');
    const messages = sdk.anthropic.messages.stream({ model: 'bd', max_tokens: 300, messages: [{ role: 'user', content: 'Hi' }] });
    let said = '';
    messages.on('text', (t) => (said += t));
    const err = await messages.finalMessage().catch((e: unknown) => e);
    expect(said).toBe('Switchyard signs');
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain('Model stream error');
  });

  it('a 400 ValidationException is invalid_request_error; a 503 reaches Responses clients as a 503', async () => {
    sdk.fake.script('script:bedrock/error-400-validation');
    const bad = await sdk.anthropic.messages.create({ model: 'bd', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'invalid_request_error', message: 'The provided model identifier is invalid.' } });
    sdk.fake.script('status:503');
    const down = await sdk.openai.responses.create({ model: 'bd', input: 'Hi' }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(OpenAI.InternalServerError);
    expect((down as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
  });

  it("a messages client's betas go in InvokeModel's body", async () => {
    sdk.fake.script('script:bedrock/invoke-stream-thinking');
    await sdk.anthropic.messages
      .stream({ model: 'bd', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'Capital of France?' }] }, { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } })
      .finalMessage();
    expect(sent(0)).toMatchObject({ anthropic_beta: ['interleaved-thinking-2025-05-14'] });
  });

  it('Converse: fields and betas a model that is not Anthropic cannot take are named in x-switchyard-warnings, streamed or not', async () => {
    // top_k is a field this SDK's types no longer list: a messages client's own field.
    const params = { model: 'nova', max_tokens: 300, top_k: 5, messages: [{ role: 'user' as const, content: 'Hello' }] };
    const options = { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } };
    const expected = 'fields dropped (the upstream is not Anthropic): top_k; anthropic-beta dropped (the upstream is not Anthropic): context-1m-2025-08-07';
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

  it('Converse: Claude takes the fields and betas, so nothing is warned', async () => {
    sdk.fake.script('script:bedrock/converse-stream-text');
    const params = { model: 'bdc', max_tokens: 300, top_k: 5, messages: [{ role: 'user' as const, content: 'Hello' }] };
    const { response } = await sdk.anthropic.messages.create(params, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } }).withResponse();
    expect(response.headers.get('x-switchyard-warnings')).toBeNull();
    expect(sent(0).additionalModelRequestFields).toEqual({ top_k: 5, anthropic_beta: ['context-1m-2025-08-07'] });
  });

  it('Converse: a JSON-schema response format and tool_choice none with tool calls in the history are warned', async () => {
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

  it('Converse: a throttlingException frame after text is an in-stream error', async () => {
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

describe('what only Gemini does', () => {
  it('an image goes as inlineData and a JSON schema as responseJsonSchema', async () => {
    sdk.fake.script('script:google-gemini/stream-text');
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false };
    await sdk.openai.chat.completions.create({
      model: 'gm',
      max_tokens: 500,
      temperature: 0.3,
      stop: ['END'],
      response_format: { type: 'json_schema', json_schema: { name: 'pet', schema, strict: true } },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Name this animal' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }],
    });
    expect(sent(0).contents).toEqual([{ role: 'user', parts: [{ text: 'Name this animal' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] }]);
    expect(sent(0).generationConfig).toEqual({ maxOutputTokens: 500, temperature: 0.3, stopSequences: ['END'], responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it("plays a coding agent's turn from the fake's generated Gemini answers (streamed call, whole report)", async () => {
    sdk.fake.script({ agent: true }, { agent: true });
    const shell = { type: 'function' as const, function: { name: 'shell', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'RUN: ls -1' }];
    const stream = await sdk.openai.chat.completions.create({ model: 'gm', stream: true, messages, tools: [shell] });
    const call = { id: '', name: '', args: '' };
    for await (const chunk of stream) {
      for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) {
        call.id += tc.id ?? '';
        call.name += tc.function?.name ?? '';
        call.args += tc.function?.arguments ?? '';
      }
    }
    expect([call.name, JSON.parse(call.args)]).toEqual(['shell', { command: 'ls -1' }]);
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }] }, { role: 'tool', tool_call_id: call.id, content: 'a.txt\nb.txt' });
    const report = await sdk.openai.chat.completions.create({ model: 'gm', messages, tools: [shell] });
    expect(report.choices[0].message.content).toBe('RESULT: b.txt');
    expect(sent(1).contents.at(-1)).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'shell', response: { output: 'a.txt\nb.txt' } } }] });
  });

  it('a SAFETY refusal falls back to the next model invisibly; streamed, before anything reached the client', async () => {
    sdk.fake.script('script:google-gemini/stream-finish-safety', { words: 4 });
    const res = await sdk.openai.chat.completions.create({ model: 'gm-guarded', messages: [{ role: 'user', content: 'Something risky' }] }).withResponse();
    expect(res.data.choices[0].message.content).toBe('Switchyard routes tokens through');
    expect(res.response.headers.get('x-switchyard-model')).toBe('up-openai');
    expect(res.response.headers.get('x-switchyard-attempts')).toBe('gm-guarded=refusal, up-openai=ok');
    expect(sdk.fake.requests.map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent', '/v1/chat/completions']);

    sdk.fake.reset();
    sdk.fake.script('script:google-gemini/stream-finish-safety', { words: 4 });
    const final = await sdk.anthropic.messages.stream({ model: 'gm-guarded', max_tokens: 300, messages: [{ role: 'user', content: 'Something risky' }] }).finalMessage();
    expect(final.content.filter((b): b is Anthropic.TextBlock => b.type === 'text').map((b) => b.text).join('')).toBe('Switchyard routes tokens through');
    expect(final.content.map((b) => b.type)).toEqual(['fallback', 'text']);
    expect(final.content[0]).toMatchObject({ from: 'gm-guarded', to: 'up-openai' });
    expect(final.stop_reason).toBe('end_turn');
    expect(sdk.fake.requests.map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:streamGenerateContent', '/v1/chat/completions']);
  });

  it('a blocked prompt falls back like a refusal', async () => {
    sdk.fake.script('script:google-gemini/generate-prompt-blocked', { words: 3 });
    const res = await sdk.openai.responses.create({ model: 'gm-guarded', input: 'Something risky' }).withResponse();
    expect(res.data.output_text).toBe('Switchyard routes tokens');
    expect(res.response.headers.get('x-switchyard-attempts')).toBe('gm-guarded=refusal, up-openai=ok');
  });

  it("Google's 429 keeps its message; a 503 UNAVAILABLE reaches chat clients as a 503", async () => {
    sdk.fake.script('script:google-gemini/error-429-resource-exhausted');
    const limited = await sdk.openai.chat.completions.create({ model: 'gm', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect((limited as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ message: 'Resource has been exhausted (e.g. check quota).', code: 'RESOURCE_EXHAUSTED' });
    sdk.fake.script('script:google-gemini/error-503-unavailable');
    const down = await sdk.openai.chat.completions.create({ model: 'gm', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(OpenAI.InternalServerError);
    expect((down as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
  });
});

describe('what only Vertex does', () => {
  it("a service account the token endpoint refuses: a 401 naming the gateway's credentials, never a 500, and no model call", async () => {
    const err = await sdk.anthropic.messages.create({ model: 'vc-untrusted', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', message: "upstream rejected the gateway's credentials: Google's token endpoint refused them (invalid_grant: Invalid JWT Signature.)" },
    });
    const refused = await sdk.openai.chat.completions.create({ model: 'vc-untrusted', messages: [{ role: 'user', content: 'Hi' }], stream: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(sdk.fake.tokenRequests.map((t) => t.token)).toEqual([undefined, undefined]);
    expect(sdk.fake.requests).toHaveLength(0);
  });
});
