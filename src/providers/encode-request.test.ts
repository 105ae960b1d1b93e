import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeRequest as encodeAnthropic } from './anthropic/encode-request.js';
import { encodeRequest as encodeOpenai } from './openai/encode-request.js';
import type { Message } from '../ir/index.js';
import { REFERENCE_PRESENT, TRANSCRIPTS, baseRequest, providerConfig } from '../../test/providers/helpers.js';

const target = (type: 'openai' | 'anthropic', modelOptions?: { service_tier?: string; speed?: string }) => ({
  provider: providerConfig(type, 'http://x'),
  modelId: 'm',
  upstreamModel: 'up-model',
  modelOptions,
});

const conversation: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'anthropic thought', signature: 'SIG==', origin: { provider: 'anthropic', model: 'claude' } },
      { type: 'reasoning', text: '', redacted: 'REDACTED==', origin: { provider: 'anthropic' } },
      { type: 'reasoning', text: 'deepseek thought', origin: { provider: 'openai', model: 'deepseek-reasoner' } },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool-call', id: 'call_2', name: 'now', arguments: '' },
      { type: 'fallback', from: 'a', to: 'b', reason: 'refusal' },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'sunny' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }] },
      { type: 'tool-result', toolCallId: 'call_2', content: [{ type: 'text', text: 'clock broken' }], isError: true },
    ],
  },
  { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
];

describe('openai encode-request', () => {
  it('encodes the conversation, echoes only own reasoning, and splits tool-result images out', () => {
    const { body } = encodeOpenai(
      baseRequest({
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: conversation,
        tools: [{ name: 'get_weather', description: 'w', inputSchema: { type: 'object' } }],
        toolChoice: { type: 'required' },
        parallelToolCalls: false,
        stopSequences: ['END'],
        temperature: 0.2,
        topP: 0.9,
        reasoning: { enabled: true, effort: 'high' },
      }),
      target('openai', { service_tier: 'priority' }),
    );
    expect(body).toMatchSnapshot();
    const msgs = body.messages as Array<Record<string, unknown>>;
    expect(msgs[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(msgs[2].reasoning_content).toBe('deepseek thought');
    expect(JSON.stringify(body)).not.toContain('SIG==');
    expect(JSON.stringify(body)).not.toContain('REDACTED==');
    expect(msgs[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'sunny' });
    expect(msgs[4]).toEqual({ role: 'tool', tool_call_id: 'call_2', content: 'Error: clock broken' });
    expect(msgs[5]).toEqual({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] });
    expect(body).toMatchObject({
      model: 'up-model', max_tokens: 1024, stream: true, stream_options: { include_usage: true },
      reasoning_effort: 'high', service_tier: 'priority', tool_choice: 'required', parallel_tool_calls: false,
    });
  });

  it('passes unknown ext fields through without letting them override owned fields', () => {
    const { body } = encodeOpenai(
      baseRequest({ ext: { 'openai-chat': { fields: { response_format: { type: 'json_object' }, seed: 7, user: 'u1', model: 'evil', messages: [], stream: false } } } }),
      target('openai'),
    );
    expect(body).toMatchObject({ response_format: { type: 'json_object' }, seed: 7, user: 'u1', model: 'up-model', stream: true });
    expect(body.messages).toEqual([{ role: 'user', content: 'Hello' }]);
  });
});

describe('anthropic encode-request', () => {
  it('encodes the conversation with signatures only from anthropic, tool results first', () => {
    const { body, headers } = encodeAnthropic(
      baseRequest({
        system: [{ type: 'text', text: 'Be brief.', ext: { anthropic: { cache_control: { type: 'ephemeral' } } } }],
        messages: conversation,
        tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }],
        toolChoice: { type: 'required' },
        parallelToolCalls: false,
        temperature: 0.5,
        reasoning: { enabled: true, budgetTokens: 2048 },
        passHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14', 'anthropic-version': '2023-06-01' },
      }),
      target('anthropic'),
    );
    expect(body).toMatchSnapshot();
    expect(headers).toEqual({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' });
    const msgs = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(msgs[1].content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: 'anthropic thought', signature: 'SIG==' },
      { type: 'redacted_thinking', data: 'REDACTED==' },
    ]);
    expect(JSON.stringify(body)).not.toContain('deepseek thought');
    expect(msgs[1].content.find((b) => b.id === 'call_2')).toMatchObject({ type: 'tool_use', input: {} });
    expect(msgs[2].content.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'text']);
    expect(msgs[2].content[1]).toMatchObject({ is_error: true });
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body.temperature).toBeUndefined();
    expect(body.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
  });

  it('drops reasoning from other providers and unsigned anthropic reasoning', () => {
    const { body } = encodeAnthropic(
      baseRequest({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'x', signature: 'FOREIGN', origin: { provider: 'openai-responses' } },
              { type: 'reasoning', text: 'unsigned', origin: { provider: 'anthropic' } },
              { type: 'text', text: 'ok' },
            ],
          },
        ],
      }),
      target('anthropic'),
    );
    expect((body.messages as Array<{ content: unknown[] }>)[1].content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('adds the fast-mode beta, defaults the version and passes unknown ext fields and server tools', () => {
    const { body, headers } = encodeAnthropic(
      baseRequest({
        temperature: 0.3,
        ext: { anthropic: { fields: { metadata: { user_id: 'u' }, top_k: 5, model: 'evil' }, serverTools: [{ type: 'web_search_20250305', name: 'web_search' }] } },
      }),
      target('anthropic', { speed: 'fast' }),
    );
    expect(headers).toEqual({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'fast-mode-2026-02-01' });
    expect(body).toMatchObject({ model: 'up-model', metadata: { user_id: 'u' }, top_k: 5, speed: 'fast', temperature: 0.3, stream: true });
    expect(body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
  });
});

describe.skipIf(!REFERENCE_PRESENT)('encoded bodies match the recorded request bodies', () => {
  const read = (f: string) => JSON.parse(readFileSync(path.join(TRANSCRIPTS, f), 'utf8')) as Record<string, unknown>;

  it('anthropic stream-thinking.request.json', () => {
    const recorded = read('anthropic-messages/stream-thinking.request.json');
    const { body } = encodeAnthropic(
      baseRequest({
        maxTokens: 4096,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'How do I cross the street?', ext: { anthropic: {} } }] }],
        reasoning: { enabled: true, budgetTokens: 1024 },
      }),
      { ...target('anthropic'), upstreamModel: 'claude-sonnet-4-0' },
    );
    expect(body).toEqual(recorded);
  });

  it('openai stream-deepseek-reasoning-content.request.json (plus max_tokens)', () => {
    const recorded = read('openai-chat/stream-deepseek-reasoning-content.request.json');
    const { body } = encodeOpenai(baseRequest(), { ...target('openai'), upstreamModel: 'deepseek-reasoner' });
    expect(body).toEqual({ ...recorded, max_tokens: 1024 });
  });
});

describe('openai encode-request: the ceiling field', () => {
  it('uses max_tokens by default and max_completion_tokens when the provider says so', () => {
    const target = (maxTokensField?: 'max_tokens' | 'max_completion_tokens') => ({
      provider: { id: 'p', type: 'openai' as const, baseUrl: 'http://x/v1', headers: {}, timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, responseMs: 1 }, maxRetries: 0, options: maxTokensField ? { max_tokens_field: maxTokensField } : {} },
      modelId: 'm',
      upstreamModel: 'gpt',
    });
    const req = baseRequest({ maxTokens: 123 });
    expect(encodeOpenai(req, target()).body).toMatchObject({ max_tokens: 123 });
    const modern = encodeOpenai(req, target('max_completion_tokens')).body;
    expect(modern).toMatchObject({ max_completion_tokens: 123 });
    expect(modern).not.toHaveProperty('max_tokens');
  });
});

describe('responses encode-request reads the IR proper, never another protocol\'s bag', () => {
  it('image detail, a refusal given back and hoisted system messages come from the IR, whichever client sent them', async () => {
    const { encodeRequest: encodeResponses } = await import('./openai-responses/encode-request.js');
    const request = baseRequest({
      system: [
        { type: 'text', text: 'Top-level rule.' },
        { type: 'text', text: 'A developer message.', hoisted: true },
      ],
      messages: [
        { role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://x.test/a.png' }, detail: 'low' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'I cannot help with that.', refusal: true }] },
        { role: 'user', content: [{ type: 'text', text: 'ok' }] },
      ],
    });
    const { body } = encodeResponses(request, { ...target('openai'), provider: { ...providerConfig('openai', 'http://x'), type: 'openai-responses' } });
    expect(body.instructions).toBe('Top-level rule.');
    expect(body.input).toEqual([
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'A developer message.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'https://x.test/a.png', detail: 'low' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'ok' }] },
    ]);
    // The chat upstream gets the detail from the IR as well.
    const chat = encodeOpenai(request, target('openai')).body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(chat.messages)).toContain('"image_url":{"detail":"low","url":"https://x.test/a.png"}');
  });
});
