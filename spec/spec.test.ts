// The generated document loads in openapi-backend (strict) and validates requests as the gateway expects.
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIBackend } from 'openapi-backend';
import { forValidation } from '../src/http/openapi-document.js';
import { check, loadApi, readDocument, type SampleRequest } from './load-api.js';

let api: OpenAPIBackend;
beforeAll(async () => {
  api = await loadApi();
});

const OPERATION_IDS = [
  'adminAddCredits', 'adminCreateAccount', 'adminCreateKey', 'adminGetAccount', 'adminGetGroupBudgets', 'adminGetLedger', 'adminGetSpend',
  'adminGetUsage', 'adminGetUserBudgets', 'adminListAccounts', 'adminListAudit', 'adminListDeployments', 'adminListKeys', 'adminListUsers', 'adminRevokeKey', 'adminUpdateKey', 'adminUpdateUser',
  'bedrockInvokeModel', 'bedrockInvokeModelWithResponseStream', 'compactResponse', 'countMessageTokens', 'createChatCompletion',
  'createMessage', 'createResponse', 'deleteResponse', 'getBalance', 'getMetrics', 'getModel', 'getOpenApiDocument', 'getResponse', 'getRoot', 'getSpend',
  'headRoot', 'listModels', 'listResponseInputItems', 'listUsage', 'vertexCountTokens', 'vertexRawPredict', 'vertexStreamRawPredict',
];

const user = { role: 'user', content: 'hi' };
const chat = (body: object): SampleRequest => ({ path: '/v1/chat/completions', body: { model: 'm', messages: [user], ...body } });
const messages = (body: object, headers: Record<string, string> = {}): SampleRequest => ({
  path: '/v1/messages',
  body: { model: 'm', messages: [user], ...body },
  headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', ...headers },
});
const responses = (body: object): SampleRequest => ({ path: '/v1/responses', body: { model: 'm', input: 'hi', ...body } });

describe('document', () => {
  it('has exactly the routed operationIds', () => {
    const doc = readDocument();
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>)
      .flatMap((item) => Object.values(item).map((op) => op.operationId))
      .sort();
    expect(ids).toEqual(OPERATION_IDS);
  });

  it('gives every operation a tag the document describes, a summary and a description', () => {
    const doc = readDocument();
    const tags = new Set((doc.tags as Array<{ name: string; description?: string }>).filter((t) => t.description).map((t) => t.name));
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.tags?.length, `${method} ${path}: tags`).toBeGreaterThan(0);
        for (const tag of op.tags) expect(tags.has(tag), `${method} ${path}: tag ${tag} is described`).toBe(true);
        expect(op.summary, `${method} ${path}: summary`).toEqual(expect.any(String));
        expect(op.description, `${method} ${path}: description`).toEqual(expect.any(String));
      }
    }
  });

  it('documents the error statuses on every operation', () => {
    const doc = readDocument();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'head') continue;
        const codes = Object.keys(op.responses);
        const needed = ['400', '404', '405', '500', ...(method === 'post' || method === 'patch' ? ['413', '415'] : [])];
        if (path.startsWith('/v1/')) needed.push('401');
        expect(codes, `${method} ${path}`).toEqual(expect.arrayContaining(needed));
      }
    }
  });

  it('has no constructs openapi-backend rejects (a discriminator mapping only in the validator copy)', () => {
    const text = JSON.stringify(readDocument());
    expect(text).not.toMatch(/unevaluatedProperties|"nullable"/);
    expect(text).not.toMatch(/"type":\[/);
    expect(text).toMatch(/"mapping"/);
    expect(JSON.stringify(forValidation(readDocument()))).not.toMatch(/"mapping"/);
  });
});

describe('valid requests pass', () => {
  const cases: [string, SampleRequest][] = [
    ['chat minimal', chat({})],
    ['chat thinking:true + fallbacks:["m"]', chat({ thinking: true, fallbacks: ['m'] })],
    ['chat fallbacks:[{model}] + default', chat({ fallbacks: [{ model: 'm' }, 'n'] })],
    ['chat fallbacks:"default"', chat({ fallbacks: 'default', thinking: { type: 'enabled', budget_tokens: 2048 } })],
    ['chat unknown extra fields', chat({ x_custom: { a: 1 }, thinking: { type: 'adaptive', extra: 1 } })],
    ['chat gateway fields', chat({ reasoning_effort: 'high', thinking_effort: 'minimal', fast: true, speed: 'fast' })],
    ['chat nulls as the SDKs send them', chat({ max_tokens: null, temperature: null, stop: null, stream_options: null })],
    [
      'chat full conversation',
      chat({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'dev' }] },
          { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'hmm',
            thinking_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'redacted_thinking', data: 'enc' }],
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        ],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
        max_completion_tokens: 100, stream: true, stream_options: { include_usage: true }, stop: ['x'], n: 1,
      }),
    ],
    ['messages minimal, no max_tokens', messages({})],
    ['messages thinking:true + fallbacks:["m"]', messages({ thinking: true, fallbacks: ['m'], max_tokens: 10 })],
    ['messages fallbacks:[{model}] and []', messages({ fallbacks: [{ model: 'm' }], thinking: { type: 'enabled', budget_tokens: 1024 } })],
    ['messages fallbacks:[]', messages({ fallbacks: [] })],
    // Real clients send one; the decoder moves it to the system prompt.
    ['messages system role turn', messages({ messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }] })],
    ['messages unknown extra fields', messages({ cache_control: { type: 'ephemeral' }, output_config: { effort: 'high' }, mcp_servers: [] })],
    ['messages vendor-version + beta', messages({}, { 'vendor-version': '2023-06-01', 'anthropic-beta': 'fast-mode-2026-02-01' })],
    [
      'messages tool round trip with thinking',
      messages({
        system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
        tools: [{ name: 't', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 't', signature: 's' },
              { type: 'redacted_thinking', data: 'd' },
              { type: 'tool_use', id: 'tu', name: 't', input: { a: 1 } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu', content: [{ type: 'text', text: 'r' }], is_error: false }] },
        ],
        stop_sequences: ['x'], temperature: 1, top_k: 5, metadata: { user_id: 'u' }, speed: 'fast',
      }),
    ],
    ['count_tokens', { ...messages({}), path: '/v1/messages/count_tokens' }],
    ['responses string input + system turn', responses({ input: [{ role: 'system', content: 'sys' }, user], thinking: true, fallbacks: ['m'] })],
    ['responses fallbacks:[{model}] + unknown fields', responses({ fallbacks: [{ model: 'm' }], prompt_cache_key: 'k', text: { verbosity: 'low' } })],
    [
      'responses items',
      responses({
        input: [
          { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'a' }, { type: 'input_image', image_url: 'https://x/y.png' }] },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 's' }], encrypted_content: 'gAAA' },
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: 'ok' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x', annotations: [] }] },
          { type: 'web_search_call', id: 'ws', status: 'completed' },
        ],
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }, { type: 'local_shell' }],
        tool_choice: 'auto', reasoning: { effort: 'low', summary: 'auto' }, max_output_tokens: 5, include: ['reasoning.encrypted_content'],
      }),
    ],
    ['admin create account', { path: '/admin/accounts', body: { name: 'acme', balance: 5_000_000_000 } }],
    ['admin credits (negative correction)', { path: '/admin/accounts/a1/credits', body: { amount: -5, reason: 'fix' } }],
    ['admin ledger limit', { method: 'get', path: '/admin/accounts/a1/ledger', query: { limit: '10' } }],
  ];
  it.each(cases)('%s', (_name, req) => {
    expect(check(api, req)).toEqual([]);
  });
});

describe('invalid requests fail, naming the field', () => {
  const cases: [string, SampleRequest, string][] = [
    ['chat missing model', { path: '/v1/chat/completions', body: { messages: [user] } }, '/requestBody'],
    ['chat max_tokens:"x"', chat({ max_tokens: 'x' }), '/requestBody/max_tokens'],
    ['chat temperature:5', chat({ temperature: 5 }), '/requestBody/temperature'],
    ['chat empty messages', chat({ messages: [] }), '/requestBody/messages'],
    ['chat unknown role', chat({ messages: [{ role: 'wizard', content: 'x' }] }), '/requestBody/messages/0'],
    ['chat bad content part', chat({ messages: [{ role: 'user', content: [{ type: 'audio' }] }] }), '/requestBody/messages/0/content/0'],
    ['chat thinking budget 0', chat({ thinking: { type: 'enabled', budget_tokens: 0 } }), '/requestBody/thinking'],
    ['chat bad reasoning_effort', chat({ reasoning_effort: 'extreme' }), '/requestBody/reasoning_effort'],
    ['chat fallbacks:"all"', chat({ fallbacks: 'all' }), '/requestBody/fallbacks'],
    ['messages missing model', { path: '/v1/messages', body: { messages: [user] } }, '/requestBody'],
    ['messages max_tokens:"x"', messages({ max_tokens: 'x' }), '/requestBody/max_tokens'],
    ['messages temperature above 1', messages({ temperature: 1.5 }), '/requestBody/temperature'],
    ['messages anthropic-version "yesterday"', messages({}, { 'anthropic-version': 'yesterday' }), '/header/anthropic-version'],
    ['messages vendor-version "v1"', messages({}, { 'vendor-version': 'v1' }), '/header/vendor-version'],
    ['messages unknown role turn', messages({ messages: [{ role: 'tool', content: 'x' }] }), '/requestBody/messages/0'],
    ['messages container block (refused by the server)', messages({ messages: [{ role: 'assistant', content: [{ type: 'container_upload', file_id: 'f' }] }] }), '/requestBody/messages/0/content/0'],
    ['messages server_tool_use without id', messages({ messages: [{ role: 'assistant', content: [{ type: 'server_tool_use', name: 'web_search', input: {} }] }] }), '/requestBody/messages/0/content/0'],
    ['messages unknown block type', messages({ messages: [{ role: 'user', content: [{ type: 'hologram' }] }] }), '/requestBody/messages/0/content/0'],
    ['messages tool_use without id', messages({ messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 't', input: {} }] }] }), '/requestBody/messages/0/content/0'],
    ['messages bad tool_choice', messages({ tool_choice: { type: 'sometimes' } }), '/requestBody/tool_choice/type'],
    ['responses missing model', { path: '/v1/responses', body: { input: 'hi' } }, '/requestBody'],
    ['responses temperature:5', responses({ temperature: 5 }), '/requestBody/temperature'],
    ['responses function tool without name', responses({ tools: [{ type: 'function' }] }), '/requestBody/tools/0'],
    ['responses function_call without call_id', responses({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }), '/requestBody/input/0'],
    ['admin empty account name', { path: '/admin/accounts', body: { name: '' } }, '/requestBody/name'],
    ['admin credits amount "x"', { path: '/admin/accounts/a1/credits', body: { amount: 'x', reason: 'r' } }, '/requestBody/amount'],
  ];
  it.each(cases)('%s', (_name, req, path) => {
    const errors = check(api, req);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((e) => e.instancePath)).toContain(path);
  });
});
