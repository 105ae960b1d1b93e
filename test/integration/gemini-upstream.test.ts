/**
 * A Gemini upstream through the real gateway, with the official SDKs of the three client
 * protocols (openai chat, @anthropic-ai/sdk messages, openai Responses) against the fake
 * upstream speaking Gemini's wire format (its project-written google-gemini scripts): streamed
 * text, a parallel tool-call round trip, thinking, a SAFETY refusal falling back to another
 * model, and Google's errors in each client's own shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { geminiCatalog } from '../support/gemini-catalog.js';
import { timeTool, weatherTool } from '../support/chat-tools.js';
import { useSdkGateway } from '../support/sdk-gateway.js';

const sdk = useSdkGateway((f) => ({ catalog: geminiCatalog(f) }));

const TEXT = 'Switchyard routes every token to Gemini.';
const THOUGHT = '**Weighing the question**\n\nThe user asks for the capital of France. It is Paris.';
const CALL_SIGNATURE = 'EpgCAYs3bq7wZnVuY3Rpb24tY2FsbC1zaWduYXR1cmUtZm9yLXBhcmFsbGVsLWNhbGxz+/=';
const sent = (i: number) => sdk.fake.requests[i].body as any;

/** The model turn and the function responses the second request carried to Gemini. */
function secondTurn() {
  const contents = sent(1).contents as Array<{ role: string; parts: any[] }>;
  return { model: contents[1], results: contents[2] };
}

describe('chat clients (openai SDK) -> Gemini', () => {
  it('stream text with usage, from streamGenerateContent with the key in x-goog-api-key', async () => {
    sdk.fake.script('script:google-gemini/stream-text');
    const stream = await sdk.openai.chat.completions.create({ model: 'gm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] });
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
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    const req = sdk.fake.requests[0];
    expect(req.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(req.headers['x-goog-api-key']).toBe('sk-fake-upstream');
    expect(req.body).toMatchObject({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] });
  });

  it('round-trip parallel tool calls: minted ids, results named after their calls, the thought signature back byte for byte', async () => {
    sdk.fake.script('script:google-gemini/stream-function-calls-parallel', 'script:google-gemini/stream-text');
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const first = await sdk.openai.chat.completions.create({ model: 'gm', messages, tools: [weatherTool, timeTool] });
    const calls = first.choices[0].message.tool_calls!.filter((c) => c.type === 'function');
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([['get_weather', { location: 'Paris' }], ['get_time', {}]]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    expect(sent(0).tools).toEqual([{ functionDeclarations: [
      { name: 'get_weather', parametersJsonSchema: weatherTool.function.parameters },
      { name: 'get_time', parametersJsonSchema: timeTool.function.parameters },
    ] }]);

    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: calls[1].id, content: '14:05' }, { role: 'tool', tool_call_id: calls[0].id, content: '18 C' });
    const second = await sdk.openai.chat.completions.create({ model: 'gm', messages, tools: [weatherTool, timeTool] });
    expect(second.choices[0].message.content).toBe(TEXT);
    const { model, results } = secondTurn();
    // The signature went out sealed in thinking_blocks (the SDK keeps the field on the message).
    expect(JSON.stringify(first.choices[0].message)).not.toContain(CALL_SIGNATURE);
    expect(model).toEqual({ role: 'model', parts: [
      { functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: CALL_SIGNATURE },
      { functionCall: { name: 'get_time', args: {} } },
    ] });
    expect(results).toEqual({ role: 'user', parts: [
      { functionResponse: { name: 'get_time', response: { output: '14:05' } } },
      { functionResponse: { name: 'get_weather', response: { output: '18 C' } } },
    ] });
  });

  it('stream thinking as reasoning_content, asking Gemini for thought summaries', async () => {
    sdk.fake.script('script:google-gemini/stream-thinking');
    const stream = await sdk.openai.chat.completions.create({ model: 'gm', stream: true, reasoning_effort: 'low', messages: [{ role: 'user', content: 'Capital of France?' }] });
    let reasoning = '';
    let text = '';
    const blocks: unknown[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as any;
      reasoning += delta?.reasoning_content ?? '';
      text += delta?.content ?? '';
      blocks.push(...(delta?.thinking_blocks ?? []));
    }
    expect(reasoning).toBe(THOUGHT);
    expect(text).toBe('The capital of France is Paris.');
    // Gemini's signature reaches a chat client only sealed (it cannot go back as Anthropic's).
    expect(JSON.stringify(blocks)).not.toContain('Cr0BAYs3');
    expect(blocks).toEqual([{ type: 'thinking', thinking: expect.any(String), signature: expect.stringMatching(/^swy1\./) }]);
    expect(sent(0).generationConfig).toMatchObject({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
  });

  it('send an image as inlineData and a JSON schema as responseJsonSchema', async () => {
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

  it("play a coding agent's turn from the fake's generated Gemini answers (streamed call, whole report)", async () => {
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

  it('a SAFETY refusal falls back to the next model invisibly', async () => {
    sdk.fake.script('script:google-gemini/stream-finish-safety', { words: 4 });
    const res = await sdk.openai.chat.completions.create({ model: 'gm-guarded', messages: [{ role: 'user', content: 'Something risky' }] }).withResponse();
    expect(res.data.choices[0].message.content).toBe('Switchyard routes tokens through');
    expect(res.response.headers.get('x-switchyard-model')).toBe('up-openai');
    expect(res.response.headers.get('x-switchyard-attempts')).toBe('gm-guarded=refusal, up-openai=ok');
    expect(sdk.fake.requests.map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent', '/v1/chat/completions']);
  });

  it("Google's 429 RESOURCE_EXHAUSTED and 503 UNAVAILABLE reach chat clients in OpenAI's shape", async () => {
    sdk.fake.script('script:google-gemini/error-429-resource-exhausted');
    const limited = await sdk.openai.chat.completions.create({ model: 'gm', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ message: 'Resource has been exhausted (e.g. check quota).', code: 'RESOURCE_EXHAUSTED' });
    sdk.fake.script('script:google-gemini/error-503-unavailable');
    const down = await sdk.openai.chat.completions.create({ model: 'gm', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(OpenAI.InternalServerError);
    expect((down as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
  });
});

describe('messages clients (@anthropic-ai/sdk) -> Gemini', () => {
  it('stream text', async () => {
    sdk.fake.script('script:google-gemini/stream-text');
    const final = await sdk.anthropic.messages.stream({ model: 'gm', max_tokens: 300, messages: [{ role: 'user', content: 'Hello' }] }).finalMessage();
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: 'text', text: TEXT });
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
    expect(sent(0).generationConfig).toEqual({ maxOutputTokens: 300 });
  });

  it('round-trip parallel tool calls', async () => {
    sdk.fake.script('script:google-gemini/stream-function-calls-parallel', 'script:google-gemini/stream-text');
    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ];
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather and time in Paris?' };
    const first = await sdk.anthropic.messages.stream({ model: 'gm', max_tokens: 300, tools, messages: [question] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => [u.name, u.input])).toEqual([['get_weather', { location: 'Paris' }], ['get_time', {}]]);
    const results: Anthropic.ToolResultBlockParam[] = uses.map((u, i) => ({ type: 'tool_result', tool_use_id: u.id, content: `result ${i}` }));
    const second = await sdk.anthropic.messages.create({ model: 'gm', max_tokens: 300, tools, messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }] });
    expect(second.content).toMatchObject([{ type: 'text', text: TEXT }]);
    const { model, results: sentResults } = secondTurn();
    expect(model.parts.map((p: any) => p.functionCall?.name)).toEqual(['get_weather', 'get_time']);
    expect(model.parts[0].thoughtSignature).toBe(CALL_SIGNATURE);
    expect(model.parts[1].thoughtSignature).toBeUndefined();
    expect(sentResults.parts).toEqual([
      { functionResponse: { name: 'get_weather', response: { output: 'result 0' } } },
      { functionResponse: { name: 'get_time', response: { output: 'result 1' } } },
    ]);
  });

  it('stream thinking as a thinking block whose Gemini signature is sealed', async () => {
    sdk.fake.script('script:google-gemini/stream-thinking');
    const final = await sdk.anthropic.messages
      .stream({ model: 'gm', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'Capital of France?' }] })
      .finalMessage();
    const thinking = final.content.filter((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
    expect(thinking.map((b) => b.thinking).join('')).toBe(THOUGHT);
    expect(thinking.filter((b) => b.signature !== '').map((b) => b.signature)).toEqual([expect.stringMatching(/^swy1\./)]);
    expect(JSON.stringify(final.content)).not.toContain('Cr0BAYs3');
    expect(final.content.at(-1)).toMatchObject({ type: 'text', text: 'The capital of France is Paris.' });
    expect(sent(0).generationConfig).toMatchObject({ maxOutputTokens: 4000, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
  });

  it('a streamed SAFETY refusal falls back before anything reached the client', async () => {
    sdk.fake.script('script:google-gemini/stream-finish-safety', { words: 4 });
    const stream = sdk.anthropic.messages.stream({ model: 'gm-guarded', max_tokens: 300, messages: [{ role: 'user', content: 'Something risky' }] });
    const final = await stream.finalMessage();
    const text = final.content.filter((b): b is Anthropic.TextBlock => b.type === 'text').map((b) => b.text).join('');
    expect(text).toBe('Switchyard routes tokens through');
    expect(final.content.map((b) => b.type)).toEqual(['fallback', 'text']);
    expect(final.content[0]).toMatchObject({ from: 'gm-guarded', to: 'up-openai' });
    expect(final.stop_reason).toBe('end_turn');
    expect(sdk.fake.requests.map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:streamGenerateContent', '/v1/chat/completions']);
  });

  it('a 429 comes back as rate_limit_error', async () => {
    sdk.fake.script('script:google-gemini/error-429-resource-exhausted');
    const err = await sdk.anthropic.messages.create({ model: 'gm', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });
});

describe('Responses clients (openai SDK) -> Gemini', () => {
  it('stream text', async () => {
    sdk.fake.script('script:google-gemini/stream-text');
    const stream = await sdk.openai.responses.create({ model: 'gm', input: 'Hello', stream: true });
    let text = '';
    let last: any;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      last = ev;
    }
    expect(text).toBe(TEXT);
    expect(last.type).toBe('response.completed');
    expect(last.response.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
  });

  it('round-trip parallel tool calls with the thought signature carried back byte for byte in encrypted_content', async () => {
    sdk.fake.script('script:google-gemini/stream-function-calls-parallel', 'script:google-gemini/stream-text');
    const tools = [weatherTool, timeTool].map((t) => ({ type: 'function' as const, name: t.function.name, parameters: t.function.parameters, strict: false }));
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const stream = await sdk.openai.responses.create({ model: 'gm', input, tools, include: ['reasoning.encrypted_content'], stream: true });
    let final: any;
    for await (const ev of stream) if (ev.type === 'response.completed') final = ev.response;
    const calls = final.output.filter((o: any) => o.type === 'function_call');
    expect(calls.map((c: any) => [c.name, JSON.parse(c.arguments)])).toEqual([['get_weather', { location: 'Paris' }], ['get_time', {}]]);
    expect(final.output.find((o: any) => o.type === 'reasoning')?.encrypted_content).toMatch(/^swy1\./);

    const next = await sdk.openai.responses.create({
      model: 'gm',
      tools,
      input: [...input, ...final.output, ...calls.map((c: any, i: number) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `result ${i}` }))],
    });
    expect(next.output_text).toBe(TEXT);
    const { model, results } = secondTurn();
    expect(model).toEqual({ role: 'model', parts: [
      { functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: CALL_SIGNATURE },
      { functionCall: { name: 'get_time', args: {} } },
    ] });
    expect(results.parts.map((p: any) => p.functionResponse.name)).toEqual(['get_weather', 'get_time']);
  });

  it('stream thinking as a reasoning summary', async () => {
    sdk.fake.script('script:google-gemini/stream-thinking');
    const stream = await sdk.openai.responses.create({ model: 'gm', input: 'Capital of France?', reasoning: { effort: 'low', summary: 'auto' }, stream: true });
    let summary = '';
    let text = '';
    for await (const ev of stream) {
      if (ev.type === 'response.reasoning_summary_text.delta') summary += ev.delta;
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    expect(summary).toBe(THOUGHT);
    expect(text).toBe('The capital of France is Paris.');
    expect(sent(0).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
  });

  it('a blocked prompt falls back like a refusal', async () => {
    sdk.fake.script('script:google-gemini/generate-prompt-blocked', { words: 3 });
    const res = await sdk.openai.responses.create({ model: 'gm-guarded', input: 'Something risky' }).withResponse();
    expect(res.data.output_text).toBe('Switchyard routes tokens');
    expect(res.response.headers.get('x-switchyard-attempts')).toBe('gm-guarded=refusal, up-openai=ok');
  });
});
