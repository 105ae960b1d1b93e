/**
 * Stateful contract checks: admin flows in which one answer depends on an earlier one (create then
 * read, credit then ledger, key created, limited, used, changed, revoked, refused), as
 * Schemathesis's stateful phase links operations. Every answer is checked like a fuzz case:
 * documented status, body and headers valid against generated/openapi.yaml, errors in the
 * operation's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FuzzRequest } from '../../tools/contract-fuzz/build-requests.js';
import { checkResponse } from '../../tools/contract-fuzz/check-response.js';
import { sendRequest } from '../../tools/contract-fuzz/send-request.js';
import { startFuzzServer, type FuzzServer } from './fuzz-gateway.js';

let server: FuzzServer;
beforeAll(async () => {
  server = await startFuzzServer();
});
afterAll(async () => {
  await server?.close();
});

interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** The credentials: the admin key, the client key, or another key. */
  as?: 'admin' | 'client' | { bearer: string } | { apiKey: string };
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  body: any;
  headers: Record<string, string>;
}

/** Sends one operation of the document and fails on anything the document does not say. */
async function call(operationId: string, c: Call = {}): Promise<Answer> {
  const op = server.ctx.contract.operations.find((o) => o.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId}`);
  let path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(c.params?.[name] ?? ''));
  if (c.query) path += `?${new URLSearchParams(c.query)}`;
  const as = c.as ?? (op.path.startsWith('/admin') ? 'admin' : 'client');
  const credential: Record<string, string> =
    as === 'admin' ? { authorization: `Bearer ${server.ctx.adminKey}` }
    : as === 'client' ? { authorization: `Bearer ${server.ctx.clientKey}` }
    : 'bearer' in as ? { authorization: `Bearer ${as.bearer}` }
    : { 'x-api-key': as.apiKey };
  const headers: Record<string, string> = { ...credential, ...(c.body === undefined ? {} : { 'content-type': 'application/json' }), ...c.headers };
  const req: FuzzRequest = { operationId, method: op.method, path, headers, body: c.body, kind: 'valid' };
  const res = await sendRequest(server.gw.url, req, 15_000);
  expect(checkResponse(server.ctx.contract, op, req, res), `${op.method} ${path}`).toEqual([]);
  return { status: res.status, body: res.text && !res.events ? JSON.parse(res.text) : undefined, headers: res.headers };
}

describe('stateful admin flows, every answer checked against the document', () => {
  it('an account created is read back, listed first, and credited with each line in its ledger', async () => {
    const created = await call('adminCreateAccount', { body: { name: 'stateful' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await call('adminGetAccount', { params: { account_id: id } })).body).toEqual(created.body);
    expect((await call('adminListAccounts', { query: { limit: '1' } })).body.data.map((a: { id: string }) => a.id)).toEqual([id]);

    const topUp = await call('adminAddCredits', { params: { account_id: id }, body: { amount: 5_000_000, reason: 'top-up' } });
    expect(topUp.body.account).toMatchObject({ id, balance: 5_000_000, available: 5_000_000 });
    const correction = await call('adminAddCredits', { params: { account_id: id }, body: { amount: -2_000_000, reason: 'mistake' } });
    expect(correction.body.entry).toMatchObject({ kind: 'credit', amount: -2_000_000, balance_after: 3_000_000, reason: 'mistake' });

    const ledger = await call('adminGetLedger', { params: { account_id: id } });
    expect(ledger.body.data.map((e: { id: number }) => e.id)).toEqual([correction.body.entry.id, topUp.body.entry.id]);
    expect(ledger.body).toMatchObject({ has_more: false, first_id: correction.body.entry.id, last_id: topUp.body.entry.id });
    // A correction below zero is refused with the account's figures, and writes nothing.
    const refused = await call('adminAddCredits', { params: { account_id: id }, body: { amount: -3_000_001, reason: 'too much' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: 'amount', balance: 3_000_000, held: 0, unit: 'nanodollars' });
    expect((await call('adminGetAccount', { params: { account_id: id } })).body).toMatchObject({ balance: 3_000_000 });
    expect((await call('adminGetAccount', { params: { account_id: 'acct_nobody' } })).status).toBe(404);
  });

  it('a key created is listed, limited, used (its usage and rate limits show), changed, revoked, then refused', async () => {
    const account = (await call('adminCreateAccount', { body: { name: 'keys', balance: 1_000_000_000 } })).body.id as string;
    const created = await call('adminCreateKey', { body: { account_id: account, name: 'first', rpm_limit: 2 } });
    expect(created.status).toBe(201);
    const { id, key } = created.body as { id: string; key: string };
    const listed = await call('adminListKeys', { query: { account_id: account } });
    expect(listed.body.data).toEqual([{ ...created.body, key: undefined }].map(({ key: _, ...k }) => k));

    // Used: the answer carries the key's limits in each protocol's headers, and its id is the usage record's.
    const chat = await call('createChatCompletion', { as: { bearer: key }, body: { model: 'local-haiku', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(200);
    expect(chat.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-switchyard-model': 'local-haiku' });
    const message = await call('createMessage', {
      as: { apiKey: key },
      headers: { 'anthropic-version': '2023-06-01' },
      body: { model: 'local-haiku', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(message.status).toBe(200);
    expect(message.headers).toMatchObject({ 'anthropic-ratelimit-requests-limit': '2', 'request-id': message.headers['x-request-id'] });
    const limited = await call('createResponse', { as: { bearer: key }, body: { model: 'local-haiku', input: 'hi', max_output_tokens: 16 } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-ratelimit-remaining-requests']).toBe('0');
    const usage = await call('adminGetUsage', { params: { account_id: account } });
    expect(usage.body.data.map((u: { request_id: string }) => u.request_id).sort()).toEqual([chat.headers['x-request-id'], message.headers['x-request-id']].sort());

    // Changed: the new name and limits are what the list shows; a null limit removes it.
    const patched = await call('adminUpdateKey', { params: { key_id: id }, body: { name: 'renamed', rpm_limit: null, tpm_limit: 100_000 } });
    expect(patched.body).toMatchObject({ id, name: 'renamed', rpm_limit: null, tpm_limit: 100_000, revoked_at: null });
    expect((await call('adminListKeys', { query: { account_id: account } })).body.data).toEqual([patched.body]);
    const unlimited = await call('createChatCompletion', { as: { bearer: key }, body: { model: 'local-haiku', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] } });
    expect(unlimited.status).toBe(200);
    expect(unlimited.headers['x-ratelimit-limit-requests']).toBeUndefined();
    expect(unlimited.headers['x-ratelimit-limit-tokens']).toBe('100000');

    // Revoked: listed as such, cannot be changed, and its next request is a 401.
    const revoked = await call('adminRevokeKey', { params: { key_id: id } });
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    expect((await call('adminListKeys', { query: { account_id: account } })).body.data).toEqual([revoked.body]);
    expect((await call('adminUpdateKey', { params: { key_id: id }, body: { name: 'again' } })).status).toBe(409);
    expect((await call('getBalance', { as: { bearer: key } })).status).toBe(401);
    expect((await call('createChatCompletion', { as: { bearer: key }, body: { model: 'local-haiku', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] } })).status).toBe(401);
  });
});

/**
 * A sample of the document's bounds, each at the bound (accepted) and one past it (the documented
 * 400 naming the field), so the document is never looser or stricter than the server there.
 */
describe('bounds: at the bound accepted, one past it a 400 naming the field', () => {
  const chat = (extra: object) => ({ model: 'local-haiku', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }], ...extra });
  const tool = (name: string) => ({ tools: [{ type: 'function', function: { name, parameters: { type: 'object' } } }] });
  const format = (name: string) => ({ text: { format: { type: 'json_schema', name, schema: { type: 'object' } } } });
  const message = (extra: object) => ({ model: 'local-haiku', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }], ...extra });
  const anthropic = { 'anthropic-version': '2023-06-01' };
  let account: string;
  let responseId: string;
  beforeAll(async () => {
    account = (await call('adminCreateAccount', { body: { name: 'bounds' } })).body.id;
    responseId = (await call('createResponse', { body: { model: 'local-haiku', input: 'hi', max_output_tokens: 16 } })).body.id;
  });

  const cases: Array<[string, string, () => Call, () => Call, string]> = [
    ['account name: 200 characters', 'adminCreateAccount', () => ({ body: { name: 'n'.repeat(200) } }), () => ({ body: { name: 'n'.repeat(201) } }), 'name'],
    ['opening balance: 2^53 - 1', 'adminCreateAccount', () => ({ body: { name: 'b', balance: 2 ** 53 - 1 } }), () => ({ body: { name: 'b', balance: 2 ** 53 } }), 'balance'],
    ['credit: 1, not 0', 'adminAddCredits', () => ({ params: { account_id: account }, body: { amount: 1, reason: 'r' } }), () => ({ params: { account_id: account }, body: { amount: 0, reason: 'r' } }), 'amount'],
    ['key rpm_limit: 1, not 0', 'adminCreateKey', () => ({ body: { account_id: account, rpm_limit: 1 } }), () => ({ body: { account_id: account, rpm_limit: 0 } }), 'rpm_limit'],
    ['allowed_models: one, not none', 'adminCreateKey', () => ({ body: { account_id: account, allowed_models: ['local-haiku'] } }), () => ({ body: { account_id: account, allowed_models: [] } }), 'allowed_models'],
    ['ledger limit: 1000', 'adminGetLedger', () => ({ params: { account_id: account }, query: { limit: '1000' } }), () => ({ params: { account_id: account }, query: { limit: '1001' } }), 'limit'],
    ['ledger before_id: 2^63 - 1', 'adminGetLedger', () => ({ params: { account_id: account }, query: { before_id: '9223372036854775807' } }), () => ({ params: { account_id: account }, query: { before_id: '9223372036854775808' } }), 'before_id'],
    ['models limit: 1000', 'listModels', () => ({ headers: anthropic, query: { limit: '1000' } }), () => ({ headers: anthropic, query: { limit: '1001' } }), 'limit'],
    ['input items limit: 100', 'listResponseInputItems', () => ({ params: { response_id: responseId }, query: { limit: '100' } }), () => ({ params: { response_id: responseId }, query: { limit: '101' } }), 'limit'],
    ['chat n: 1', 'createChatCompletion', () => ({ body: chat({ n: 1 }) }), () => ({ body: chat({ n: 2 }) }), 'n'],
    ['chat max_tokens: 1', 'createChatCompletion', () => ({ body: chat({ max_tokens: 1 }) }), () => ({ body: chat({ max_tokens: 0 }) }), 'max_tokens'],
    ['chat temperature: 2', 'createChatCompletion', () => ({ body: chat({ temperature: 2 }) }), () => ({ body: chat({ temperature: 2.01 }) }), 'temperature'],
    ['tool name: 128 characters', 'createChatCompletion', () => ({ body: chat(tool('t'.repeat(128))) }), () => ({ body: chat(tool('t'.repeat(129))) }), 'tools[0].function.name'],
    ['messages temperature: 1', 'createMessage', () => ({ headers: anthropic, body: message({ temperature: 1 }) }), () => ({ headers: anthropic, body: message({ temperature: 1.01 }) }), 'temperature'],
    ['messages max_tokens: 1', 'createMessage', () => ({ headers: anthropic, body: message({ max_tokens: 1 }) }), () => ({ headers: anthropic, body: message({ max_tokens: 0 }) }), 'max_tokens'],
    ['thinking budget: 1', 'createMessage', () => ({ headers: anthropic, body: message({ max_tokens: 8, thinking: { type: 'enabled', budget_tokens: 1 } }) }), () => ({ headers: anthropic, body: message({ thinking: { type: 'enabled', budget_tokens: 0 } }) }), 'thinking.budget_tokens'],
    ['responses max_output_tokens: 1', 'createResponse', () => ({ body: { model: 'local-haiku', input: 'hi', max_output_tokens: 1 } }), () => ({ body: { model: 'local-haiku', input: 'hi', max_output_tokens: 0 } }), 'max_output_tokens'],
    ['format name: 64 characters', 'createResponse', () => ({ body: { model: 'local-haiku', input: 'hi', max_output_tokens: 16, ...format('f'.repeat(64)) } }), () => ({ body: { model: 'local-haiku', input: 'hi', ...format('f'.repeat(65)) } }), 'text.format.name'],
  ];

  it.each(cases)('%s', async (_name, operationId, at, past, param) => {
    const ok = await call(operationId, at());
    expect(ok.status, JSON.stringify(ok.body)).toBeLessThan(300);
    const refused = await call(operationId, past());
    expect(refused.status).toBe(400);
    const error = refused.body.error;
    // OpenAI's shape names the field in `param`; Anthropic's leads its message with it.
    if ('param' in error) expect(error.param).toBe(param);
    else expect(error.message).toMatch(new RegExp(`^${param.replace(/[.[\]]/g, '\\$&')}`));
  });

  it('an image URL: http(s) or base64 data, nothing else', async () => {
    const image = (url: string) => chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
    const refused = await call('createChatCompletion', { body: image('ftp://example.com/cat.png') });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('messages[0].content[0].image_url.url');
    const input = (url: string) => ({ model: 'local-haiku', input: [{ role: 'user', content: [{ type: 'input_image', image_url: url }] }] });
    expect((await call('createResponse', { body: input('data:image/png,notbase64') })).body.error.param).toBe('input[0].content[0].image_url');
  });
});

/**
 * The providers' protocol shapes stay open in the document (providers extend them), so the
 * validator cannot see an undeclared field there: the gateway's own answers are held to the
 * declared properties here instead.
 */
describe("protocol answers carry only declared fields", () => {
  const undeclared = (schema: string, value: Record<string, unknown>): string[] => {
    const properties = server.ctx.contract.definition.components.schemas[schema]?.properties ?? {};
    return Object.keys(value).filter((k) => !(k in properties)).map((k) => `${schema}.${k}`);
  };

  it('chat, messages and responses, top level, usage, choice and output', async () => {
    const chat = (await call('createChatCompletion', { body: { model: 'local-sonnet', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } })).body;
    const message = (await call('createMessage', { headers: { 'anthropic-version': '2023-06-01' }, body: { model: 'local-sonnet', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } })).body;
    const response = (await call('createResponse', { body: { model: 'local-sonnet', input: 'hi', max_output_tokens: 16 } })).body;
    const message_output = response.output.find((o: { type: string }) => o.type === 'message');
    expect([
      ...undeclared('ChatCompletion', chat),
      ...undeclared('ChatUsage', chat.usage),
      ...undeclared('ChatCompletionChoice', chat.choices[0]),
      ...undeclared('ChatCompletionMessage', chat.choices[0].message),
      ...undeclared('Message', message),
      ...undeclared('MessageUsage', message.usage),
      ...undeclared('ResponseObject', response),
      ...undeclared('ResponseUsage', response.usage),
      ...undeclared('ResponseOutputMessage', message_output),
    ]).toEqual([]);
  });
});
