/**
 * Vertex AI upstreams through the real gateway: Anthropic's models (`rawPredict` /
 * `streamRawPredict`) and Gemini (`streamGenerateContent`) on Vertex, with the official SDKs of
 * the three client protocols (openai chat, @anthropic-ai/sdk messages, openai Responses) against
 * the fake upstream, which answers Vertex's routes only with a bearer token its OAuth endpoint
 * issued for the test's service account: streamed text, a parallel tool-call round trip and
 * thinking from each, and token and Vertex failures in each client's own shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { timeTool, weatherTool } from '../support/chat-tools.js';
import { useSdkGateway } from '../support/sdk-gateway.js';
import { VERTEX_PROJECT_PATH, vertexCatalog } from '../support/vertex-catalog.js';

const sdk = useSdkGateway((f) => ({ catalog: vertexCatalog(f) }));

const sent = (i: number) => sdk.fake.requests[i].body as any;

/** What each Vertex publisher's scripts say, and where its calls go. */
const KINDS = [
  {
    name: 'Anthropic on Vertex',
    model: 'vc',
    streamPath: `${VERTEX_PROJECT_PATH}/anthropic/models/claude-sonnet-4-5%4020250929:streamRawPredict`,
    text: { script: 'script:anthropic-messages/stream-text', answer: 'Switchyard is a gateway that speaks three wire protocols and bills every request in tokens against a balance.', usage: { input: 12, output: 24 } },
    tools: 'script:anthropic-messages/stream-parallel-tool-use',
    thinking: {
      script: 'script:anthropic-messages/stream-thinking',
      thought: 'The user asks how to cross a street. This is about pedestrian safety: stop at the kerb, look both ways, use a marked crossing and wait for the signal. I will answer in a short list.',
      answer: 'Stop at the kerb, look left and right, and cross at a marked crossing when the signal shows green.',
      // Claude's signatures hold across the platforms it runs on: a messages client gets it.
      signature: 'EqQBCkgIBxABGAIiQLw0c2l0Y2h5YXJkLXNjcmlwdGVkLXNpZ25hdHVyZS1ub3QtYS1yZWFsLW9uZQbase64+/padding==',
    },
    /** The body is Anthropic's Messages body, versioned for Vertex, without the model. */
    checkBody: (body: any) => {
      expect(body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
      expect(body).not.toHaveProperty('model');
    },
    /** The tool results the second turn carried upstream, by call name. */
    results: (body: any) => {
      const names = new Map<string, string>(body.messages[1].content.filter((b: any) => b.type === 'tool_use').map((b: any) => [b.id, b.name]));
      return body.messages[2].content.filter((b: any) => b.type === 'tool_result').map((b: any) => [names.get(b.tool_use_id), b.content[0].text]);
    },
  },
  {
    name: 'Gemini on Vertex',
    model: 'vg',
    streamPath: `${VERTEX_PROJECT_PATH}/google/models/gemini-2.5-flash:streamGenerateContent`,
    text: { script: 'script:google-gemini/stream-text', answer: 'Switchyard routes every token to Gemini.', usage: { input: 12, output: 7 } },
    tools: 'script:google-gemini/stream-function-calls-parallel',
    thinking: {
      script: 'script:google-gemini/stream-thinking',
      thought: '**Weighing the question**\n\nThe user asks for the capital of France. It is Paris.',
      answer: 'The capital of France is Paris.',
      // Gemini's thought signatures go back to Gemini only: a messages client gets them sealed.
      signature: expect.stringMatching(/^swy1\./) as unknown as string,
    },
    /** The body is Gemini's, every content with its role (Vertex requires it). */
    checkBody: (body: any) => {
      expect(body.contents.length).toBeGreaterThan(0);
      expect(body.contents.every((c: any) => c.role === 'user' || c.role === 'model')).toBe(true);
    },
    results: (body: any) => body.contents[2].parts.map((p: any) => [p.functionResponse.name, p.functionResponse.response.output]),
  },
] as const;

describe.each(KINDS)('chat clients (openai SDK) -> $name', (k) => {
  it('stream text with usage, with the service account\'s bearer token', async () => {
    sdk.fake.script(k.text.script);
    const stream = await sdk.openai.chat.completions.create({ model: k.model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(k.text.answer);
    expect(usage).toMatchObject({ prompt_tokens: k.text.usage.input, completion_tokens: k.text.usage.output });
    const req = sdk.fake.requests[0];
    expect(req.path).toBe(k.streamPath);
    expect(req.headers.authorization).toMatch(/^Bearer ya29\.fake-\d+$/);
    k.checkBody(req.body);
  });

  it('stream parallel tool calls and send their results back', async () => {
    sdk.fake.script(k.tools, k.text.script);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const stream = await sdk.openai.chat.completions.create({ model: k.model, stream: true, messages, tools: [weatherTool, timeTool] });
    const calls: Array<{ id: string; name: string; args: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      finish = chunk.choices[0]?.finish_reason ?? finish;
      for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) {
        calls[tc.index] ??= { id: '', name: '', args: '' };
        calls[tc.index].id += tc.id ?? '';
        calls[tc.index].name += tc.function?.name ?? '';
        calls[tc.index].args += tc.function?.arguments ?? '';
      }
    }
    expect(finish).toBe('tool_calls');
    expect(calls.map((c) => [c.name, JSON.parse(c.args || '{}')])).toEqual([['get_weather', { location: 'Paris' }], ['get_time', {}]]);
    messages.push(
      { role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.args } })) },
      { role: 'tool', tool_call_id: calls[0].id, content: '18 C' },
      { role: 'tool', tool_call_id: calls[1].id, content: '14:05' },
    );
    const second = await sdk.openai.chat.completions.create({ model: k.model, messages, tools: [weatherTool, timeTool] });
    expect(second.choices[0].message.content).toBe(k.text.answer);
    expect(k.results(sent(1))).toEqual([['get_weather', '18 C'], ['get_time', '14:05']]);
  });

  it('stream thinking as reasoning_content', async () => {
    sdk.fake.script(k.thinking.script);
    const stream = await sdk.openai.chat.completions.create({ model: k.model, stream: true, reasoning_effort: 'low', messages: [{ role: 'user', content: 'A question' }] });
    let reasoning = '';
    let text = '';
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string; content?: string } | undefined;
      reasoning += delta?.reasoning_content ?? '';
      text += delta?.content ?? '';
    }
    expect(reasoning).toBe(k.thinking.thought);
    expect(text).toBe(k.thinking.answer);
  });
});

describe.each(KINDS)('messages clients (@anthropic-ai/sdk) -> $name', (k) => {
  it('stream text', async () => {
    sdk.fake.script(k.text.script);
    const final = await sdk.anthropic.messages.stream({ model: k.model, max_tokens: 300, messages: [{ role: 'user', content: 'Hello' }] }).finalMessage();
    expect(final.content).toMatchObject([{ type: 'text', text: k.text.answer }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ output_tokens: k.text.usage.output });
    expect(sdk.fake.requests[0].path).toBe(k.streamPath);
  });

  it('stream parallel tool calls and send their results back', async () => {
    sdk.fake.script(k.tools, k.text.script);
    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ];
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather and time in Paris?' };
    const first = await sdk.anthropic.messages.stream({ model: k.model, max_tokens: 300, tools, messages: [question] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => [u.name, u.input])).toEqual([['get_weather', { location: 'Paris' }], ['get_time', {}]]);
    const results: Anthropic.ToolResultBlockParam[] = [
      { type: 'tool_result', tool_use_id: uses[0].id, content: '18 C' },
      { type: 'tool_result', tool_use_id: uses[1].id, content: '14:05' },
    ];
    const second = await sdk.anthropic.messages.create({ model: k.model, max_tokens: 300, tools, messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }] });
    expect(second.content).toMatchObject([{ type: 'text', text: k.text.answer }]);
    expect(k.results(sent(1))).toEqual([['get_weather', '18 C'], ['get_time', '14:05']]);
  });

  it('stream thinking as a thinking block', async () => {
    sdk.fake.script(k.thinking.script);
    const final = await sdk.anthropic.messages
      .stream({ model: k.model, max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'A question' }] })
      .finalMessage();
    const thinking = final.content.filter((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
    expect(thinking.map((b) => b.thinking).join('')).toBe(k.thinking.thought);
    expect(thinking.map((b) => b.signature).join('')).toEqual(k.thinking.signature);
    expect(final.content.at(-1)).toMatchObject({ type: 'text', text: k.thinking.answer });
  });
});

describe.each(KINDS)('Responses clients (openai SDK) -> $name', (k) => {
  it('stream text', async () => {
    sdk.fake.script(k.text.script);
    const stream = await sdk.openai.responses.create({ model: k.model, input: 'Hello', stream: true });
    let text = '';
    let last: any;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      last = ev;
    }
    expect(text).toBe(k.text.answer);
    expect(last.type).toBe('response.completed');
    expect(last.response.usage).toMatchObject({ output_tokens: k.text.usage.output });
  });

  it('stream parallel tool calls and send their results back', async () => {
    sdk.fake.script(k.tools, k.text.script);
    const tools = [weatherTool, timeTool].map((t) => ({ type: 'function' as const, name: t.function.name, parameters: t.function.parameters, strict: false }));
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const stream = await sdk.openai.responses.create({ model: k.model, input, tools, stream: true });
    let final: any;
    for await (const ev of stream) if (ev.type === 'response.completed') final = ev.response;
    const calls = final.output.filter((o: any) => o.type === 'function_call');
    expect(calls.map((c: any) => [c.name, JSON.parse(c.arguments || '{}')])).toEqual([['get_weather', { location: 'Paris' }], ['get_time', {}]]);
    const outputs = ['18 C', '14:05'].map((output, i) => ({ type: 'function_call_output' as const, call_id: calls[i].call_id, output }));
    const next = await sdk.openai.responses.create({ model: k.model, tools, input: [...input, ...final.output, ...outputs] });
    expect(next.output_text).toBe(k.text.answer);
    expect(k.results(sent(1))).toEqual([['get_weather', '18 C'], ['get_time', '14:05']]);
  });

  it('stream thinking as a reasoning summary', async () => {
    sdk.fake.script(k.thinking.script);
    const stream = await sdk.openai.responses.create({ model: k.model, input: 'A question', reasoning: { effort: 'low', summary: 'auto' }, stream: true });
    let summary = '';
    let text = '';
    for await (const ev of stream) {
      if (ev.type === 'response.reasoning_summary_text.delta') summary += ev.delta;
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    expect(summary).toBe(k.thinking.thought);
    expect(text).toBe(k.thinking.answer);
  });
});

describe('Vertex failures in the client\'s shape', () => {
  it("Vertex's 429 RESOURCE_EXHAUSTED reaches a chat client as a RateLimitError, a messages client as rate_limit_error", async () => {
    sdk.fake.script('script:google-vertex/error-429-resource-exhausted');
    const limited = await sdk.openai.chat.completions.create({ model: 'vc', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'RESOURCE_EXHAUSTED' });
    sdk.fake.script('status:429?retryAfter=3');
    const err = await sdk.anthropic.messages.create({ model: 'vg', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

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
