/**
 * One test per bug the contract fuzzer found, each with the shrunk request it reported.
 * (The fuzzer itself is contract-fuzz.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { schemaErrors } from '../support/stream-checks.js';
import { fuzzCatalog } from './fuzz-gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startTestGateway({ catalog: fuzzCatalog(fake.url) });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

async function send(method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(gw.url + path, { method, headers, body: body === undefined ? undefined : Buffer.from(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const json = () => ({ authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' });

describe('contract-fuzz regressions', () => {
  it('HEAD / ignores a malformed anthropic-version (400 is not documented for headRoot)', async () => {
    // Shrunk: [badVersionHeader] HEAD / -H 'anthropic-version: 2023-6-1'
    expect((await send('HEAD', '/', { 'anthropic-version': '2023-6-1' })).status).toBe(200);
    // The Anthropic routes still refuse it, before authentication.
    const res = await send('POST', '/v1/messages', { 'anthropic-version': '2023-6-1', 'content-type': 'application/json' }, '{}');
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('invalid_request_error');
  });

  it('a deeply nested body is a 400, not a 500 from JSON.stringify on the way upstream', async () => {
    // Shrunk: [deeplyNested] POST /v1/chat/completions {"model":"fake-gpt",...,"x_deep":{"a":{"a":...20000 levels}}}
    const deep = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
    const body = `{"model":"fake-gpt","messages":[{"role":"developer","content":[],"name":""}],"max_tokens":1,"x_deep":${deep}}`;
    const res = await send('POST', '/v1/chat/completions', json(), body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('nested deeper') });
    // Nesting a tool schema might legitimately need stays accepted.
    const ok = `{"model":"fake-gpt","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"x_deep":${'['.repeat(100)}${']'.repeat(100)}}`;
    expect((await send('POST', '/v1/chat/completions', json(), ok)).status).toBe(200);
  });

  it('messages: a tool named "" is refused (it came back as a tool_use the official schema rejects)', async () => {
    // Shrunk: [valid] POST /v1/messages {"model":"local-haiku","messages":[{"role":"user","content":""}],"tools":[{"name":"","description":"","input_schema":{}}],"max_tokens":4,"stream":false}
    const body = '{"model":"local-haiku","messages":[{"role":"user","content":""}],"tools":[{"name":"","description":"","input_schema":{}}],"max_tokens":4,"stream":false}';
    const res = await send('POST', '/v1/messages', json(), body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it.each([
    ['chat: a named tool_choice with an empty function name', 'ChatCompletionRequest', '/v1/chat/completions', { model: 'fake-gpt', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: { type: 'function', function: { name: '' } } }],
    ['messages: a tool tool_choice with an empty name', 'CreateMessageRequest', '/v1/messages', { model: 'local-haiku', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: '' } }],
    ['responses: a function tool_choice with an empty name', 'CreateResponseRequest', '/v1/responses', { model: 'local-haiku', input: 'hi', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }], tool_choice: { type: 'function', name: '' } }],
    ['responses: tool_choice.type ""', 'CreateResponseRequest', '/v1/responses', { model: 'local-haiku', input: 'hi', tool_choice: { type: '' } }],
  ])('%s: refused by the server and by the published document alike', async (_name, schema, path, body) => {
    // Shrunk: [valid] bodies the document accepted and the server refused with a 400.
    expect(await schemaErrors(schema, body)).not.toEqual([]);
    expect((await send('POST', path, json(), JSON.stringify(body))).status).toBe(400);
  });

  it('responses: an unknown tool_choice type is refused (it was echoed into the response object)', async () => {
    // Shrunk: [valid] POST /v1/responses {"model":"local-haiku","input":[],"tool_choice":{"type":"","name":""},"max_output_tokens":1,"top_p":0}
    const res = await send('POST', '/v1/responses', json(), '{"model":"local-haiku","input":[],"tool_choice":{"type":"","name":""},"max_output_tokens":1,"top_p":0}');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'tool_choice.type' });
    const hosted = await send('POST', '/v1/responses', json(), '{"model":"local-haiku","input":"hi","tool_choice":{"type":"web_search_preview"},"max_output_tokens":1}');
    expect(hosted.status).toBe(200);
  });

  it('responses: an unknown tool type is refused (it was echoed into the response object)', async () => {
    // Shrunk: [valid] POST /v1/responses {"model":"local-haiku","input":"","tools":[{"type":""}],"max_output_tokens":1,"metadata":null,"speed":""}
    const res = await send('POST', '/v1/responses', json(), '{"model":"local-haiku","input":"","tools":[{"type":""}],"max_output_tokens":1,"metadata":null,"speed":""}');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'tools.0.type' });
  });

  it('responses: a reasoning.summary outside auto|concise|detailed is refused (it was echoed)', async () => {
    // Shrunk: [valid] POST /v1/responses {"model":"local-haiku","input":"","reasoning":{"effort":null,"summary":""},"max_output_tokens":1}
    const res = await send('POST', '/v1/responses', json(), '{"model":"local-haiku","input":"","reasoning":{"effort":null,"summary":""},"max_output_tokens":1}');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'reasoning.summary' });
  });

  it('admin: amounts beyond 2^53 are a 400 before anything is written (was: account created, then 500)', async () => {
    // Shrunk: [boundary] POST /admin/accounts {"name":" ","balance":9007199254740992}
    const admin = { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' };
    const before = (await gw.ledger.db.selectFrom('accounts').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n;
    const res = await send('POST', '/admin/accounts', admin, '{"name":" ","balance":9007199254740992}');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'balance' });
    const after = (await gw.ledger.db.selectFrom('accounts').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n;
    expect(String(after)).toBe(String(before));
    // A credit that would carry a balance past 2^53 is refused the same way.
    const credit = await send('POST', `/admin/accounts/${gw.accountId}/credits`, admin, `{"amount":${Number.MAX_SAFE_INTEGER},"reason":"x"}`);
    expect(credit.status).toBe(400);
    expect((await send('GET', '/v1/balance', { authorization: `Bearer ${gw.key}` })).status).toBe(200);
  });

  it('a warning quoting non-ASCII request text still fits its header (was: 500 invalid header character)', async () => {
    // Shrunk: [valid] POST /v1/responses {"model":"local-haiku","input":[{"type":"item_reference","id":"Ā"}],"max_output_tokens":1}
    // item_reference is now resolved from stored responses: an unknown id is a 404 whose body quotes it.
    const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: json(), body: '{"model":"local-haiku","input":[{"type":"item_reference","id":"Ā\\r\\nx"}],"max_output_tokens":1}' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('Ā');
  });

  describe('the document and the server refuse the same requests (Schemathesis findings, issue 22)', () => {
    const msgHeaders = () => ({ 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    const admin = () => ({ authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' });
    const message = (over: Record<string, unknown>) => ({ model: 'local-haiku', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }], ...over });
    const user = (...content: unknown[]) => message({ messages: [{ role: 'user', content }] });
    const assistant = (...content: unknown[]) => message({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content }] });
    const cases: Array<[string, string, string, () => Record<string, string>, Record<string, unknown>, string]> = [
      ['a search_result block', '/v1/messages', 'CreateMessageRequest', msgHeaders, user({ type: 'search_result', source: 's', title: 't', content: [] }), 'messages.0.content.0'],
      ['a PDF document', '/v1/messages', 'CreateMessageRequest', msgHeaders, user({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }), 'messages.0.content.0.source'],
      ['a Files API image', '/v1/messages', 'CreateMessageRequest', msgHeaders, user({ type: 'image', source: { type: 'file', file_id: 'file_1' } }), 'messages.0.content.0.source'],
      ['a document in a tool result', '/v1/messages', 'CreateMessageRequest', msgHeaders, user({ type: 'tool_result', tool_use_id: 't', content: [{ type: 'document', source: { type: 'text', data: 'x' } }] }), 'messages.0.content.0.content.0'],
      ['a tool_use block in a user turn', '/v1/messages', 'CreateMessageRequest', msgHeaders, user({ type: 'tool_use', id: 't', name: 'f', input: {} }), 'messages.0.content.0'],
      ['a server_tool_use block without id', '/v1/messages', 'CreateMessageRequest', msgHeaders, assistant({ type: 'server_tool_use', name: 'web_search', input: {} }), 'messages.1.content.0'],
      ['a container_upload block', '/v1/messages', 'CreateMessageRequest', msgHeaders, assistant({ type: 'container_upload', file_id: 'f' }), 'messages.1.content.0'],
      ['an image block in an assistant turn', '/v1/messages', 'CreateMessageRequest', msgHeaders, assistant({ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }), 'messages.1.content.0'],
      ['an image in a system turn', '/v1/messages', 'CreateMessageRequest', msgHeaders, message({ messages: [{ role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }, { role: 'user', content: 'hi' }] }), 'messages.0.content.0'],
      ['a system block without text', '/v1/messages', 'CreateMessageRequest', msgHeaders, message({ system: [{ type: 'text' }] }), 'system.0.text'],
      ['a tool name with a space', '/v1/messages', 'CreateMessageRequest', msgHeaders, message({ tools: [{ name: 'get weather', input_schema: {} }] }), 'tools.0.name'],
      ['a chat function name of 129 characters', '/v1/chat/completions', 'ChatCompletionRequest', json, { model: 'local-haiku', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f'.repeat(129) } }] }, 'tools.0.function.name'],
      ['a Responses function named ""', '/v1/responses', 'CreateResponseRequest', json, { model: 'local-haiku', input: 'hi', tools: [{ type: 'function', name: '' }] }, 'tools.0.name'],
      ['an empty fallback id', '/v1/chat/completions', 'ChatCompletionRequest', json, { model: 'local-haiku', messages: [{ role: 'user', content: 'hi' }], fallbacks: [''] }, 'fallbacks.0'],
      ['an empty fallback {model}', '/v1/messages', 'CreateMessageRequest', msgHeaders, message({ fallbacks: [{ model: '' }] }), 'fallbacks.0'],
      ['a Responses request without input', '/v1/responses', 'CreateResponseRequest', json, { model: 'local-haiku' }, 'input'],
      ['an opening balance above 2^53 - 1', '/admin/accounts', 'CreateAccountRequest', admin, { name: 'a', balance: 2 ** 53 }, 'balance'],
      ['a credit of zero', `/admin/accounts/{account}/credits`, 'AddCreditsRequest', admin, { amount: 0, reason: 'x' }, 'amount'],
      ['a credit above 2^53 - 1', `/admin/accounts/{account}/credits`, 'AddCreditsRequest', admin, { amount: 2 ** 53, reason: 'x' }, 'amount'],
      ['a correction below -(2^53 - 1)', `/admin/accounts/{account}/credits`, 'AddCreditsRequest', admin, { amount: -(2 ** 53), reason: 'x' }, 'amount'],
    ];
    it.each(cases)('%s: refused by the document and by the server (400 naming it)', async (_name, path, schema, headers, body, param) => {
      expect(await schemaErrors(schema, body), 'the document should refuse it').not.toEqual([]);
      const res = await send('POST', path.replace('{account}', gw.accountId), headers(), JSON.stringify(body));
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      const error = res.json.error;
      expect(error.type).toBe('invalid_request_error');
      if (res.json.type !== 'error') expect(String(error.param).replace(/\[(\d+)\]/g, '.$1')).toBe(param);
      else expect(error.message).toContain(param.replace(/\.(\d+)/g, '[$1]').replace(/^([^[]*)\[/, '$1['));
    });

    it('what the document accepts in each block union, the server accepts', async () => {
      const accepted = [
        user({ type: 'text', text: 'a' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } }),
        message({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: 'ok' }, { type: 'tool_use', id: 't1', name: 'f', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r' }] }] }], tools: [{ name: 'f', input_schema: { type: 'object' } }] }),
        message({ messages: [{ role: 'system', content: [{ type: 'text', text: 'be brief' }] }, { role: 'user', content: 'hi' }], system: [{ type: 'text', text: 's' }] }),
        // A server tool's turn given back (it reaches only an Anthropic upstream; elsewhere it is named in the warnings).
        assistant({ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } }),
        assistant(
          { type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'q' } },
          { type: 'web_search_tool_result', tool_use_id: 's1', content: [{ type: 'web_search_result', url: 'https://example.com', title: 't', encrypted_content: 'e' }] },
          { type: 'text', text: 'cited', citations: [{ type: 'web_search_result_location', url: 'https://example.com', title: 't', cited_text: 'c', encrypted_index: 'i' }] },
        ),
      ];
      for (const body of accepted) {
        expect(await schemaErrors('CreateMessageRequest', body)).toEqual([]);
        const res = await send('POST', '/v1/messages', msgHeaders(), JSON.stringify(body));
        expect(res.status, JSON.stringify(res.json)).toBe(200);
      }
    });

    it('a zero credit names both ways to be right', async () => {
      const res = await send('POST', `/admin/accounts/${gw.accountId}/credits`, admin(), '{"amount":0,"reason":"x"}');
      expect(res.json.error.message).toBe('amount: must be >= 1 or must be <= -1');
    });
  });
});
