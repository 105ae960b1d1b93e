import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../ir/errors.js';
import { decodeMessagesRequest } from './decode-request.js';

const decode = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  decodeMessagesRequest({ model: 'claude-x', max_tokens: 100, messages: [], ...body }, headers);

function paramOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e.param;
    throw e;
  }
  throw new Error('did not throw');
}

describe('decodeMessagesRequest', () => {
  it('defaults max_tokens to 4096 and passes version/beta headers', () => {
    const r = decodeMessagesRequest({ model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'fast-mode-2026-02-01', authorization: 'x' });
    expect(r).toEqual({
      model: 'claude-x',
      system: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      maxTokens: 4096,
      maxTokensDefaulted: true,
      stream: false,
      reasoning: { enabled: false },
      fast: false,
      fallbacks: 'default',
      ext: {},
      passHeaders: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'fast-mode-2026-02-01' },
      nativeOnly: [{ protocol: 'anthropic', upstream: 'Anthropic', feature: 'anthropic-beta', names: ['fast-mode-2026-02-01'] }],
    });
    expect(decode({}, { 'vendor-version': '2023-06-01' }).passHeaders).toEqual({ 'anthropic-version': '2023-06-01' });
  });

  it('system string, text blocks with cache_control, and a system turn inside messages', () => {
    const r = decode({
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'system', content: 'Also polite.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(r.system).toEqual([
      { type: 'text', text: 'You are terse.', ext: { anthropic: { cache_control: { type: 'ephemeral' } } } },
      { type: 'text', text: 'Also polite.', hoisted: true },
    ]);
    expect(r.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    expect(decode({ system: 'plain' }).system).toEqual([{ type: 'text', text: 'plain' }]);
  });

  it('splits tool_result blocks into a tool message before the rest of the user turn', () => {
    const r = decode({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'here you go' },
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              is_error: true,
              content: [
                { type: 'text', text: 'boom' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA=' } },
              ],
            },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_3' }] },
      ],
    });
    expect(r.messages).toEqual([
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] },
          {
            type: 'tool-result',
            toolCallId: 'toolu_2',
            isError: true,
            content: [
              { type: 'text', text: 'boom' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAA=' } },
            ],
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'here you go' }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_3', content: [] }] },
    ]);
  });

  it('images base64 and url; text documents; other block types are a 400 naming the type', () => {
    const r = decode({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' }, cache_control: { type: 'ephemeral' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc body' }, title: 'T' },
          ],
        },
      ],
    });
    expect(r.messages[0].content).toEqual([
      { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' }, ext: { anthropic: { cache_control: { type: 'ephemeral' } } } },
      { type: 'text', text: 'doc body', ext: { anthropic: { document: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc body' }, title: 'T' } } } },
    ]);
    const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } };
    expect(paramOf(() => decode({ messages: [{ role: 'user', content: [pdf] }] }))).toBe('messages.0.content.0.source');
    let msg = '';
    try {
      decode({ messages: [{ role: 'user', content: [{ type: 'search_result', source: 'x' }] }] });
    } catch (e) {
      msg = (e as Error).message;
      expect((e as GatewayError).param).toBe('messages.0.content.0.type');
    }
    expect(msg).toContain('search_result');
  });

  it('assistant blocks: text, tool_use (input stringified), thinking with signature, redacted thinking', () => {
    const r = decode({
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'plan', signature: 'Er4B+/=' },
            { type: 'redacted_thinking', data: 'enc==' },
            { type: 'thinking', thinking: 'unsigned', signature: '' },
            { type: 'text', text: 'calling' },
            { type: 'tool_use', id: 'toolu_1', name: 'get', input: { city: 'Paris' }, caller: { type: 'direct' } },
            { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
          ],
        },
      ],
    });
    expect(r.messages[0]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'plan', signature: 'Er4B+/=', origin: { provider: 'anthropic' } },
        { type: 'reasoning', text: '', redacted: 'enc==', origin: { provider: 'anthropic' } },
        { type: 'reasoning', text: 'unsigned' },
        { type: 'text', text: 'calling' },
        { type: 'tool-call', id: 'toolu_1', name: 'get', arguments: '{"city":"Paris"}', ext: { anthropic: { caller: { type: 'direct' } } } },
        { type: 'tool-call', id: 'toolu_2', name: 'now', arguments: '{}' },
      ],
    });
    expect(paramOf(() => decode({ messages: [{ role: 'assistant', content: [{ type: 'container_upload', file_id: 'f' }] }] }))).toBe('messages.0.content.0.type');
  });

  it('assistant server tool blocks and citations: IR server tool parts and citations, never client tool calls', () => {
    const cite = { type: 'web_search_result_location', url: 'https://example.org', title: 't', cited_text: 'c', encrypted_index: 'e' };
    const results = [{ type: 'web_search_result', url: 'https://example.org', title: 't', encrypted_content: 'x' }];
    const r = decode({
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: results },
            { type: 'text', text: 'cited', citations: [cite] },
          ],
        },
      ],
    });
    expect(r.messages[0]).toEqual({
      role: 'assistant',
      content: [
        { type: 'server-tool-call', id: 'srvtoolu_1', name: 'web_search', arguments: '{"query":"q"}' },
        { type: 'server-tool-result', toolCallId: 'srvtoolu_1', kind: 'web_search_tool_result', content: results },
        { type: 'text', text: 'cited', citations: [cite] },
      ],
    });
  });

  it('tools, server tools and tool_choice', () => {
    const r = decode({
      tools: [
        { name: 'get', description: 'd', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } },
        { type: 'custom', name: 'c', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
    expect(r.tools).toEqual([
      { name: 'get', description: 'd', inputSchema: { type: 'object', properties: {} }, ext: { anthropic: { cache_control: { type: 'ephemeral' } } } },
      { name: 'c', inputSchema: { type: 'object' } },
    ]);
    expect(r.ext.anthropic).toEqual({ serverTools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] });
    expect(r.nativeOnly).toEqual([{ protocol: 'anthropic', upstream: 'Anthropic', serverTools: true, feature: 'server tools', names: ['web_search_20250305'] }]);
    expect(r).toMatchObject({ toolChoice: { type: 'required' }, parallelToolCalls: false });
    const get = [{ name: 'get', input_schema: { type: 'object' } }];
    expect(decode({ tools: get, tool_choice: { type: 'tool', name: 'get' } }).toolChoice).toEqual({ type: 'tool', name: 'get' });
    expect(paramOf(() => decode({ tools: get, tool_choice: { type: 'tool', name: 'nope' } }))).toBe('tool_choice.name');
    expect(paramOf(() => decode({ tools: [{ type: 'web_search_20250305', name: 'web_search' }, ...get, ...get] }))).toBe('tools.2.name');
    // Server tools share the name space, and tool_choice may force one.
    const web = { type: 'web_search_20250305', name: 'web_search' };
    expect(decode({ tools: [web, ...get], tool_choice: { type: 'tool', name: 'web_search' } }).toolChoice).toEqual({ type: 'tool', name: 'web_search' });
    expect(paramOf(() => decode({ tools: [web, { name: 'web_search', input_schema: { type: 'object' } }] }))).toBe('tools.1.name');
    expect(decode({ tool_choice: { type: 'none' } }).parallelToolCalls).toBeUndefined();
    expect(paramOf(() => decode({ tool_choice: { type: 'tool' } }))).toBe('tool_choice.name');
  });

  it('thinking variants, effort, fast, fallbacks, sampling', () => {
    expect(decode({ thinking: { type: 'enabled', budget_tokens: 1024 } }).reasoning).toEqual({ enabled: true, budgetTokens: 1024 });
    expect(decode({ thinking: true }).reasoning).toEqual({ enabled: true });
    expect(decode({ thinking: { type: 'adaptive' } }).reasoning).toEqual({ enabled: true, adaptive: true });
    expect(decode({ thinking: { type: 'disabled' } }).reasoning).toEqual({ enabled: false });
    expect(decode({ reasoning_effort: 'high' }).reasoning).toEqual({ enabled: true, effort: 'high' });
    expect(decode({ speed: 'fast' }).fast).toBe(true);
    expect(decode({ fallbacks: [] }).fallbacks).toEqual([]);
    expect(decode({ fallbacks: ['claude-b'] }).fallbacks).toEqual(['claude-b']);
    expect(decode({ stop_sequences: ['END'], temperature: 0.5, top_p: 0.8, stream: true })).toMatchObject({ stopSequences: ['END'], temperature: 0.5, topP: 0.8, stream: true });
  });

  it('keeps unknown and Anthropic-only top-level fields in ext.anthropic.fields, naming those another upstream loses', () => {
    const extras = {
      top_k: 5,
      metadata: { user_id: 'u' },
      service_tier: 'auto',
      cache_control: { type: 'ephemeral' },
      output_config: { effort: 'high' },
      context_management: { edits: [] },
      container: 'c1',
      mcp_servers: [{ type: 'url', url: 'https://mcp', name: 'm' }],
      brand_new_field: 1,
    };
    const r = decode(extras);
    expect(r.ext).toEqual({ anthropic: { fields: extras } });
    // metadata's user_id is the end user the gateway records.
    const lost = Object.keys(extras).filter((k) => k !== 'metadata');
    expect(r.nativeOnly).toEqual([{ protocol: 'anthropic', upstream: 'Anthropic', feature: 'fields', names: lost }]);
    // A raw gateway effort has no Messages field: no upstream gets it.
    expect(decode({ reasoning_effort: 'xhigh' }).ext).toEqual({});
  });

  it('rejects unknown roles and tool_result in an assistant turn', () => {
    expect(paramOf(() => decode({ messages: [{ role: 'tool', content: 'x' }] }))).toBe('messages.0.role');
    expect(paramOf(() => decode({ messages: [{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'x' }] }] }))).toBe('messages.0.content.0.type');
  });
});
