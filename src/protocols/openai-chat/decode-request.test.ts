import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../ir/errors.js';
import { decodeChatRequest } from './decode-request.js';

const decode = (body: Record<string, unknown>) => decodeChatRequest({ model: 'm1', messages: [], ...body }, {});

function paramOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e.param;
    throw e;
  }
  throw new Error('did not throw');
}

describe('decodeChatRequest', () => {
  it('applies defaults', () => {
    const r = decode({ messages: [{ role: 'user', content: 'hi' }] });
    expect(r).toEqual({
      model: 'm1',
      system: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      maxTokens: 16384,
      maxTokensDefaulted: true,
      stream: false,
      reasoning: { enabled: false },
      fast: false,
      fallbacks: 'default',
      ext: {},
      passHeaders: {},
    });
  });

  it('max_completion_tokens wins over max_tokens', () => {
    expect(decode({ max_tokens: 10 })).toMatchObject({ maxTokens: 10, maxTokensDefaulted: false });
    expect(decode({ max_tokens: 10, max_completion_tokens: 20 }).maxTokens).toBe(20);
  });

  it('moves leading and mid-conversation system/developer turns to system', () => {
    const r = decode({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
        { role: 'developer', content: [{ type: 'text', text: 'use tools' }] },
      ],
    });
    expect(r.system).toEqual([
      { type: 'text', text: 'be brief', hoisted: true },
      { type: 'text', text: 'use tools', hoisted: true, ext: { 'openai-chat': { role: 'developer' } } },
    ]);
    expect(r.messages).toHaveLength(1);
  });

  it('decodes user images: data URL -> base64, http -> url, detail kept in the IR', () => {
    const r = decode({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
          ],
        },
      ],
    });
    expect(r.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this' },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'high' },
        { type: 'image', source: { kind: 'url', url: 'https://example.com/a.jpg' } },
      ],
    });
    expect(paramOf(() => decode({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] }] }))).toBe(
      'messages.0.content.0.image_url.url',
    );
    expect(paramOf(() => decode({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }))).toBe(
      'messages.0.content.0.type',
    );
  });

  it('decodes assistant reasoning, text, refusal and tool calls (arguments verbatim)', () => {
    const r = decode({
      messages: [
        {
          role: 'assistant',
          content: 'checking',
          reasoning_content: 'think',
          refusal: 'no way',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a": 1 }' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '' } },
          ],
        },
      ],
    });
    expect(r.messages[0]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'checking' },
        { type: 'text', text: 'no way', refusal: true },
        { type: 'tool-call', id: 'c1', name: 'f', arguments: '{"a": 1 }' },
        { type: 'tool-call', id: 'c2', name: 'g', arguments: '{}' },
      ],
    });
  });

  it('thinking_blocks win over reasoning_content and keep signatures byte for byte', () => {
    const r = decode({
      messages: [
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'ignored',
          thinking_blocks: [
            { type: 'thinking', thinking: 'step', signature: 'EqQBCkYIBxgCKkD+/=' },
            { type: 'redacted_thinking', data: 'opaque==' },
          ],
        },
      ],
    });
    expect(r.messages[0].content).toEqual([
      { type: 'reasoning', text: 'step', signature: 'EqQBCkYIBxgCKkD+/=', origin: { provider: 'anthropic' } },
      { type: 'reasoning', text: '', redacted: 'opaque==', origin: { provider: 'anthropic' } },
    ]);
  });

  it('a lone signed block sent back with empty text takes its text from reasoning_content', () => {
    const turn = (blocks: unknown[]) => decode({ messages: [{ role: 'assistant', content: 'ok', reasoning_content: 'step one', thinking_blocks: blocks }] });
    expect(turn([{ type: 'thinking', thinking: '', signature: 'sig' }]).messages[0].content[0]).toEqual({
      type: 'reasoning', text: 'step one', signature: 'sig', origin: { provider: 'anthropic' },
    });
    // Two blocks cannot share one reasoning_content: each keeps its own text.
    const two = turn([{ type: 'thinking', thinking: '', signature: 's1' }, { type: 'thinking', thinking: 'b', signature: 's2' }]);
    expect(two.messages[0].content.slice(0, 2).map((p) => (p as { text: string }).text)).toEqual(['', 'b']);
  });

  it('merges consecutive tool messages into one IR tool message', () => {
    const r = decode({
      messages: [
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: '42' }] },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(r.messages).toEqual([
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'sunny' }] },
          { type: 'tool-result', toolCallId: 'c2', content: [{ type: 'text', text: '42' }] },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ]);
  });

  it('maps tools, tool_choice, stop, stream options and sampling', () => {
    const r = decode({
      tools: [{ type: 'function', function: { name: 'get', description: 'd', parameters: { type: 'object', properties: {} }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'get' } },
      parallel_tool_calls: false,
      stop: 'END',
      stream: true,
      stream_options: { include_usage: true, include_obfuscation: false },
      temperature: 0.2,
      top_p: 0.9,
    });
    expect(r.tools).toEqual([{ name: 'get', description: 'd', inputSchema: { type: 'object', properties: {} }, ext: { 'openai-chat': { strict: true } } }]);
    expect(r).toMatchObject({ toolChoice: { type: 'tool', name: 'get' }, parallelToolCalls: false, stopSequences: ['END'], stream: true, includeUsage: true, temperature: 0.2, topP: 0.9 });
    expect(r.ext['openai-chat']).toEqual({ fields: { stream_options: { include_obfuscation: false } } });
    expect(decode({ stop: ['a', 'b'], tool_choice: 'required' })).toMatchObject({ stopSequences: ['a', 'b'], toolChoice: { type: 'required' } });
  });

  it('gateway options: thinking, effort alias, fast alias, fallbacks', () => {
    expect(decode({ thinking: true, reasoning_effort: 'low' }).reasoning).toEqual({ enabled: true, effort: 'low' });
    expect(decode({ thinking: { type: 'enabled', budget_tokens: 1024 } }).reasoning).toEqual({ enabled: true, budgetTokens: 1024 });
    expect(decode({ thinking_effort: 'none', thinking: true }).reasoning.enabled).toBe(false);
    expect(decode({ speed: 'fast' }).fast).toBe(true);
    expect(decode({ fallbacks: [{ model: 'b' }, 'c'] }).fallbacks).toEqual(['b', 'c']);
    expect(decode({ fallbacks: [] }).fallbacks).toEqual([]);
    // Gateway options do not leak into the OpenAI passthrough bag.
    expect(decode({ fast: true, fallbacks: 'default', thinking: true }).ext).toEqual({});
  });

  it('keeps unmapped fields in ext for an OpenAI upstream', () => {
    const r = decode({ n: 1, user: 'u1', metadata: { a: 'b' }, response_format: { type: 'json_object' }, seed: 7, logprobs: true, service_tier: 'flex', presence_penalty: 0.5 });
    expect(r.ext['openai-chat']).toEqual({ fields: { n: 1, user: 'u1', metadata: { a: 'b' }, seed: 7, logprobs: true, service_tier: 'flex', presence_penalty: 0.5 } });
    // A raw effort the IR rounds goes back to an OpenAI upstream as sent.
    expect(decode({ reasoning_effort: 'minimal' }).ext['openai-chat']).toEqual({ fields: { reasoning_effort: 'minimal' } });
    // Structured output has its IR home, so every upstream kind can get it.
    expect(r.responseFormat).toEqual({ type: 'json_object' });
  });

  it('rejects n > 1, unknown roles and non-function tools', () => {
    expect(paramOf(() => decode({ n: 2 }))).toBe('n');
    expect(paramOf(() => decode({ messages: [{ role: 'function', content: 'x', name: 'f' }] }))).toBe('messages.0.role');
    expect(paramOf(() => decode({ tools: [{ type: 'custom', custom: { name: 'x' } }] }))).toBe('tools.0');
    expect(paramOf(() => decode({ messages: [{ role: 'tool', content: 'x' }] }))).toBe('messages.0.tool_call_id');
  });

  it('rejects tool names no provider takes, duplicates, and a tool_choice naming a missing tool', () => {
    const fn = (name: string) => ({ type: 'function', function: { name } });
    expect(paramOf(() => decode({ tools: [fn('')] }))).toBe('tools.0.function.name');
    expect(paramOf(() => decode({ tools: [fn('get weather')] }))).toBe('tools.0.function.name');
    expect(paramOf(() => decode({ tools: [fn('a'), fn('a')] }))).toBe('tools.1.function.name');
    expect(paramOf(() => decode({ tools: [fn('a')], tool_choice: { type: 'function', function: { name: 'b' } } }))).toBe('tool_choice.function.name');
    expect(decode({ tools: [fn('get_weather-2')], tool_choice: { type: 'function', function: { name: 'get_weather-2' } } }).toolChoice).toEqual({ type: 'tool', name: 'get_weather-2' });
  });
});
