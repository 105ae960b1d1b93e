/**
 * The official SDKs across protocols, through the real gateway and the fake upstream:
 * OpenAI SDK -> Anthropic upstream and Anthropic SDK -> OpenAI upstream (streaming text, parallel
 * tool calls round trip, thinking round trip with signatures intact, usage), plus same-protocol
 * passthrough of unknown fields and the headers that matter.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { scriptsDir, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { timeTool, weatherTool } from '../support/chat-tools.js';
import { startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';

let started: FakeGateway | undefined;
let fake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  started = await startFakeGateway((f) => ({ catalog: fakeCatalog(f, { maxRetries: 0 }) }));
  ({ fake, gw } = started);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
});
beforeEach(() => fake.reset());
afterAll(() => started?.close());

const PARALLEL_SCRIPT = 'script:anthropic-messages/stream-parallel-tool-use';

/** The signature the scripted Anthropic thinking stream carries, read from the file itself. */
function recordedSignature(): string {
  const text = readFileSync(path.join(scriptsDir(), 'anthropic-messages/stream-thinking.sse'), 'utf8');
  return JSON.parse(text.split('\n').find((l) => l.includes('signature_delta'))!.slice(5)).delta.signature;
}

describe('OpenAI SDK -> Anthropic upstream', () => {
  it('streams text with usage (cache reads kept apart)', async () => {
    fake.script('script:anthropic-messages/stream-text');
    const stream = await openai.chat.completions.create({
      model: 'up-anthropic',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Hello' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(20);
    expect(finish).toBe('stop');
    // The script's message_start: input 12 (+0 cache); output tokens as scripted.
    expect(usage).toMatchObject({ prompt_tokens: 12, prompt_tokens_details: { cached_tokens: 0 } });
    expect(usage!.completion_tokens).toBeGreaterThan(0);
    const sent = fake.requests[0].body as any;
    expect(sent).toMatchObject({ model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user' }] });
  });

  it('round-trips parallel tool calls (split and empty arguments), then answers', async () => {
    fake.script(PARALLEL_SCRIPT, { words: 4 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const first = await openai.chat.completions.create({ model: 'up-anthropic', stream: true, stream_options: { include_usage: true }, messages, tools: [weatherTool, timeTool] });
    const calls: Array<{ id: string; name: string; args: string }> = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of first) {
      for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) {
        calls[tc.index] ??= { id: '', name: '', args: '' };
        calls[tc.index].id += tc.id ?? '';
        calls[tc.index].name += tc.function?.name ?? '';
        calls[tc.index].args += tc.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(finish).toBe('tool_calls');
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(JSON.parse(calls[0].args)).toEqual({ location: 'Paris' });
    // A tool without input: `{}` or nothing, never a broken fragment.
    expect(JSON.parse(calls[1].args || '{}')).toEqual({});
    // 50 uncached + 100 cache read + 20 cache write; 42 output.
    expect(usage).toMatchObject({ prompt_tokens: 170, completion_tokens: 42, prompt_tokens_details: { cached_tokens: 100 } });

    messages.push(
      { role: 'assistant', content: 'Checking both.', tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.args } })) },
      { role: 'tool', tool_call_id: calls[0].id, content: '18 C, cloudy' },
      { role: 'tool', tool_call_id: calls[1].id, content: '14:05' },
    );
    const second = await openai.chat.completions.create({ model: 'up-anthropic', messages, tools: [weatherTool, timeTool] });
    expect(second.choices[0].message.content).toBe('Switchyard routes tokens through');
    const turn2 = fake.requests[1].body as any;
    expect(turn2.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_01Weather', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'toolu_02Time', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01Weather', content: [{ type: 'text', text: '18 C, cloudy' }] },
          { type: 'tool_result', tool_use_id: 'toolu_02Time', content: [{ type: 'text', text: '14:05' }] },
        ],
      },
    ]);
  });

  it('round-trips thinking across two turns with the signature byte for byte', async () => {
    fake.script('script:anthropic-messages/stream-thinking', { words: 3 });
    const messages: any[] = [{ role: 'user', content: 'How do I cross the street safely?' }];
    const first = await openai.chat.completions.create({ model: 'up-anthropic', stream: true, reasoning_effort: 'low', messages });
    let reasoning = '';
    let text = '';
    const blocks: any[] = [];
    for await (const chunk of first) {
      const delta = chunk.choices[0]?.delta as any;
      reasoning += delta?.reasoning_content ?? '';
      text += delta?.content ?? '';
      blocks.push(...(delta?.thinking_blocks ?? []));
    }
    const signature = recordedSignature();
    // The signed block arrives whole, its text equal to the streamed reasoning_content.
    expect(blocks).toEqual([{ type: 'thinking', thinking: reasoning, signature }]);
    expect(reasoning).toContain('pedestrian safety');
    expect(fake.requests[0].body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 } });

    messages.push({ role: 'assistant', content: text, thinking_blocks: blocks }, { role: 'user', content: 'Thanks!' });
    await openai.chat.completions.create({ model: 'up-anthropic', reasoning_effort: 'low', messages });
    const assistant = (fake.requests[1].body as any).messages[1];
    expect(assistant.role).toBe('assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: reasoning, signature });
    expect(assistant.content[0].signature).toBe(signature);
    expect(assistant.content[1]).toEqual({ type: 'text', text });
  });

  it("round-trips thinking through the SDK's stream helper: its final message goes back as it is", async () => {
    fake.script('script:anthropic-messages/stream-thinking', { words: 3 });
    const messages: any[] = [{ role: 'user', content: 'How do I cross the street safely?' }];
    const stream = openai.chat.completions.stream({ model: 'up-anthropic', reasoning_effort: 'low', messages });
    const final = await stream.finalChatCompletion();
    const message = final.choices[0].message as any;
    const signature = recordedSignature();
    expect(message.thinking_blocks).toEqual([{ type: 'thinking', thinking: expect.stringContaining('pedestrian safety'), signature }]);

    messages.push(message, { role: 'user', content: 'Thanks!' });
    await openai.chat.completions.create({ model: 'up-anthropic', reasoning_effort: 'low', messages });
    const assistant = (fake.requests[1].body as any).messages[1];
    expect(assistant.content[0]).toEqual(message.thinking_blocks[0]);
  });
});

describe('Anthropic SDK -> OpenAI upstream', () => {
  it('streams text with usage', async () => {
    fake.script('script:openai-chat/stream-text');
    const stream = anthropic.messages.stream({ model: 'up-openai', max_tokens: 200, messages: [{ role: 'user', content: 'Hello' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text' });
    expect((final.content[0] as Anthropic.TextBlock).text.length).toBeGreaterThan(5);
    expect(final.stop_reason).toBe('end_turn');
    const recorded = readFileSync(path.join(scriptsDir(), 'openai-chat/stream-text.sse'), 'utf8');
    const usage = JSON.parse(recorded.split('\n').filter((l) => l.includes('"usage"')).at(-1)!.slice(5)).usage;
    expect(final.usage).toMatchObject({ output_tokens: usage.completion_tokens, input_tokens: usage.prompt_tokens });
    expect(fake.requests[0].body).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 200, stream: true, stream_options: { include_usage: true } });
  });

  it('round-trips parallel tool calls, then answers', async () => {
    fake.script('script:openai-chat/stream-tool-calls-parallel', { words: 5 });
    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', input_schema: { type: 'object', properties: {} } },
      { name: 'get_stock_price', input_schema: { type: 'object', properties: {} } },
    ];
    const question: Anthropic.MessageParam = { role: 'user', content: 'Weather in SF and the GOOG price?' };
    const first = await anthropic.messages.stream({ model: 'up-openai', max_tokens: 300, tools, messages: [question] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => u.name)).toEqual(['get_weather', 'get_stock_price']);
    for (const u of uses) expect(typeof u.input).toBe('object');

    const results: Anthropic.ToolResultBlockParam[] = uses.map((u, i) => ({ type: 'tool_result', tool_use_id: u.id, content: `result ${i}` }));
    const second = await anthropic.messages.create({
      model: 'up-openai',
      max_tokens: 300,
      tools,
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: results }],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Switchyard routes tokens through many' }]);
    const sent = (fake.requests[1].body as any).messages;
    expect(sent[1]).toMatchObject({ role: 'assistant', tool_calls: uses.map((u) => ({ id: u.id, type: 'function', function: { name: u.name, arguments: JSON.stringify(u.input) } })) });
    expect(sent.slice(2)).toEqual(uses.map((u, i) => ({ role: 'tool', tool_call_id: u.id, content: `result ${i}` })));
  });

  it('shows DeepSeek reasoning as thinking, and never forwards an invented signature', async () => {
    fake.script('script:openai-chat/stream-reasoning-content', { words: 2 });
    const question: Anthropic.MessageParam = { role: 'user', content: '9.11 and 9.8, which is greater?' };
    const first = await anthropic.messages.stream({ model: 'up-openai', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [question] }).finalMessage();
    const thinking = first.content.find((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
    expect(thinking?.thinking.length).toBeGreaterThan(50);
    expect(thinking?.signature).toBe('');
    expect(first.usage.output_tokens).toBeGreaterThan(0);
    expect(fake.requests[0].body).toMatchObject({ reasoning_effort: 'low' });

    await anthropic.messages.create({ model: 'up-openai', max_tokens: 4000, messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: 'Sure?' }] });
    const assistant = (fake.requests[1].body as any).messages[1];
    expect(assistant.role).toBe('assistant');
    expect(JSON.stringify(assistant)).not.toContain('signature');
  });
});

describe('same-protocol passthrough', () => {
  it('messages -> Anthropic keeps unknown fields and anthropic-beta / anthropic-version, renames the model', async () => {
    fake.script({ words: 3 });
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-1m-2025-08-07,interleaved-thinking-2025-05-14' },
      body: JSON.stringify({
        model: 'up-anthropic',
        max_tokens: 100,
        metadata: { user_id: 'u-42' },
        top_k: 5,
        service_tier: 'standard_only',
        container: 'cont_1',
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      }),
    });
    expect(res.status).toBe(200);
    const sent = fake.requests[0];
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['anthropic-beta']).toBe('context-1m-2025-08-07,interleaved-thinking-2025-05-14');
    expect(sent.headers['x-api-key']).toBe('sk-fake-upstream');
    expect(sent.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      metadata: { user_id: 'u-42' },
      top_k: 5,
      service_tier: 'standard_only',
      container: 'cont_1',
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      stream: false,
    });
  });

  it('chat -> OpenAI keeps unknown fields, renames the model', async () => {
    fake.script({ words: 3 });
    await openai.chat.completions.create({
      model: 'up-openai',
      messages: [{ role: 'user', content: 'Hi', name: 'alice' }],
      seed: 7,
      user: 'u-42',
      logit_bias: { '50256': -100 },
      metadata: { trace: 't-1' },
      store: false,
      max_tokens: 50,
    });
    const sent = fake.requests[0];
    expect(sent.headers.authorization).toBe('Bearer sk-fake-upstream');
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi', name: 'alice' }],
      seed: 7,
      user: 'u-42',
      logit_bias: { '50256': -100 },
      metadata: { trace: 't-1' },
      store: false,
      max_tokens: 50,
      stream: false,
    });
    // stream_options is for streams only; OpenAI rejects it on a non-streamed request.
    expect(sent.body).not.toHaveProperty('stream_options');
  });
});
