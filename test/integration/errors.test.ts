/**
 * Errors in the caller's protocol: each case goes over real HTTP (through the official SDK where
 * a client would use one), arrives as the SDK's typed error, names the field at fault, carries the
 * request id headers, and its body matches generated/openapi.yaml.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, recordingFetch, schemaErrors } from '../support/stream-checks.js';

const LIMIT = 64 * 1024;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1), bodyLimitBytes: LIMIT });
});
afterAll(async () => gw?.close());

const hello = [{ role: 'user' as const, content: 'Hello' }];

/** Runs `call`, expects the SDK error class, and checks the recorded raw body against the spec. */
async function sdkError<E extends Error>(
  call: (rec: ReturnType<typeof recordingFetch>) => Promise<unknown>,
  type: abstract new (...args: any[]) => E,
  operationId: string,
): Promise<{ err: E & { status: number; error: any }; body: any; headers: Headers }> {
  const rec = recordingFetch();
  const err = await call(rec).then(
    () => {
      throw new Error('expected an error');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  const raw = rec.last();
  const body = JSON.parse(await raw.text());
  expect(await bodyErrors(operationId, raw.status, body), JSON.stringify(body)).toEqual([]);
  expect(raw.headers.get('x-request-id')).toMatch(/^req_/);
  return { err: err as E & { status: number; error: any }, body, headers: raw.headers };
}

const openai = (rec: ReturnType<typeof recordingFetch>, key = gw.key) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, fetch: rec.fetch, maxRetries: 0 });
const anthropic = (rec: ReturnType<typeof recordingFetch>, key = gw.key) => new Anthropic({ baseURL: gw.url, apiKey: key, fetch: rec.fetch, maxRetries: 0 });

describe('errors on /v1/chat/completions (OpenAI shape)', () => {
  it('a schema violation is a BadRequestError naming the field', async () => {
    const { err, body } = await sdkError(
      (rec) => openai(rec).chat.completions.create({ model: 'local-haiku', messages: hello, temperature: 'hot' as any }),
      OpenAI.BadRequestError,
      'createChatCompletion',
    );
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'temperature' });
    expect(err.message).toContain('temperature');
  });

  it('a bad message names its path', async () => {
    const { body } = await sdkError(
      (rec) => openai(rec).chat.completions.create({ model: 'local-haiku', messages: [{ role: 'user', content: 42 as any }] }),
      OpenAI.BadRequestError,
      'createChatCompletion',
    );
    expect(body.error.param).toMatch(/^messages\[0\]/);
    expect(body.error.message).toContain('messages[0]');
  });

  it('an unknown model is a NotFoundError', async () => {
    const { body } = await sdkError((rec) => openai(rec).chat.completions.create({ model: 'no-such-model', messages: hello }), OpenAI.NotFoundError, 'createChatCompletion');
    expect(body.error).toMatchObject({ type: 'not_found_error', param: 'model' });
    expect(body.error.message).toContain('no-such-model');
  });

  it('a body over the limit is 413', async () => {
    const { err } = await sdkError(
      (rec) => openai(rec).chat.completions.create({ model: 'local-haiku', messages: [{ role: 'user', content: 'x'.repeat(LIMIT) }] }),
      OpenAI.APIError,
      'createChatCompletion',
    );
    expect(err.status).toBe(413);
  });

  it('an unaffordable request is 402 before any output', async () => {
    const poor = await gw.newAccount(1n);
    const { err, body } = await sdkError((rec) => openai(rec, poor.key).chat.completions.create({ model: 'local-haiku', messages: hello }), OpenAI.APIError, 'createChatCompletion');
    expect(err.status).toBe(402);
    expect(body.error.message).toMatch(/balance/i);
  });
});

describe('errors on /v1/messages (Anthropic shape)', () => {
  it('a schema violation is a BadRequestError naming the field', async () => {
    const { err, body, headers } = await sdkError(
      (rec) => anthropic(rec).messages.create({ model: 'local-haiku', max_tokens: 'many' as any, messages: hello }),
      Anthropic.BadRequestError,
      'createMessage',
    );
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(body.error.message).toContain('max_tokens');
    expect(err.message).toContain('max_tokens');
    expect(headers.get('request-id')).toBe(headers.get('x-request-id'));
    expect(body.request_id).toBe(headers.get('request-id'));
  });

  it('an empty messages list is a BadRequestError naming messages', async () => {
    const { body } = await sdkError(
      (rec) => anthropic(rec).messages.create({ model: 'local-haiku', max_tokens: 10, messages: [] }),
      Anthropic.BadRequestError,
      'createMessage',
    );
    expect(body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('messages') });
  });

  it('an unknown content block type names its path', async () => {
    const { body } = await sdkError(
      (rec) => anthropic(rec).messages.create({ model: 'local-haiku', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'hologram' } as any] }] }),
      Anthropic.BadRequestError,
      'createMessage',
    );
    expect(body.error.message).toContain('messages[0].content');
  });

  it('an unknown model is a NotFoundError', async () => {
    const { body } = await sdkError((rec) => anthropic(rec).messages.create({ model: 'no-such-model', max_tokens: 10, messages: hello }), Anthropic.NotFoundError, 'createMessage');
    expect(body.error).toMatchObject({ type: 'not_found_error' });
    expect(body.error.message).toContain('no-such-model');
  });

  it('a body over the limit is 413 request_too_large', async () => {
    const { err, body } = await sdkError(
      (rec) => anthropic(rec).messages.create({ model: 'local-haiku', max_tokens: 10, messages: [{ role: 'user', content: 'x'.repeat(LIMIT) }] }),
      Anthropic.APIError,
      'createMessage',
    );
    expect(err.status).toBe(413);
    expect(body.error.type).toBe('request_too_large');
  });
});

describe('errors below the SDKs (raw HTTP)', () => {
  const post = (path: string, body: string, headers: Record<string, string>) => fetch(`${gw.url}${path}`, { method: 'POST', body, headers });
  const chatHeaders = () => ({ authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' });
  const msgHeaders = () => ({ 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
  const good = JSON.stringify({ model: 'local-haiku', max_tokens: 10, messages: hello });

  async function expectError(res: Response, status: number, operationId: string | undefined, schema: 'OpenAIErrorResponse' | 'AnthropicErrorResponse') {
    const body: any = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(status);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await schemaErrors(schema, body)).toEqual([]);
    if (operationId) expect(await bodyErrors(operationId, status, body)).toEqual([]);
    if (schema === 'AnthropicErrorResponse') expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
    return body;
  }

  it('malformed JSON is 400 in both shapes', async () => {
    const chat = await expectError(await post('/v1/chat/completions', '{"model":', chatHeaders()), 400, 'createChatCompletion', 'OpenAIErrorResponse');
    expect(chat.error.message).toMatch(/JSON/);
    const msg = await expectError(await post('/v1/messages', '{"model":', msgHeaders()), 400, 'createMessage', 'AnthropicErrorResponse');
    expect(msg.error.message).toMatch(/JSON/);
  });

  it('a body that is not a JSON object is 400', async () => {
    const body = await expectError(await post('/v1/messages', '[1,2]', msgHeaders()), 400, 'createMessage', 'AnthropicErrorResponse');
    expect(body.error.message).toMatch(/object/);
  });

  it('a wrong content type is 415', async () => {
    await expectError(await post('/v1/chat/completions', good, { ...chatHeaders(), 'content-type': 'text/plain' }), 415, 'createChatCompletion', 'OpenAIErrorResponse');
    const body = await expectError(await post('/v1/messages', good, { ...msgHeaders(), 'content-type': 'application/x-www-form-urlencoded' }), 415, 'createMessage', 'AnthropicErrorResponse');
    expect(body.error.message).toContain('application/json');
  });

  it('a malformed anthropic-version or vendor-version is 400 naming the header', async () => {
    for (const name of ['anthropic-version', 'vendor-version']) {
      const body = await expectError(await post('/v1/messages', good, { ...msgHeaders(), [name]: 'latest' }), 400, 'createMessage', 'AnthropicErrorResponse');
      expect(body.error.message).toContain(name);
    }
  });

  it('an unknown route is 404 and a wrong method 405, in the shape of the path', async () => {
    const chat404 = await expectError(await fetch(`${gw.url}/v1/nothing-here`, { headers: chatHeaders() }), 404, undefined, 'OpenAIErrorResponse');
    expect(chat404.error.message).toContain('/v1/nothing-here');
    await expectError(await fetch(`${gw.url}/v1/messages/nothing`, { method: 'POST', headers: msgHeaders(), body: good }), 404, undefined, 'AnthropicErrorResponse');
    const getChat = await fetch(`${gw.url}/v1/chat/completions`, { headers: chatHeaders() });
    expect(getChat.headers.get('allow')).toBe('POST');
    expect((await expectError(getChat, 405, undefined, 'OpenAIErrorResponse')).error.message).toContain('allowed: POST');
    const putMessages = await fetch(`${gw.url}/v1/messages`, { method: 'PUT', headers: msgHeaders(), body: good });
    expect(putMessages.headers.get('allow')).toBe('POST');
    await expectError(putMessages, 405, undefined, 'AnthropicErrorResponse');
    const deleteKeys = await fetch(`${gw.url}/admin/keys/key_x`, { method: 'POST', headers: chatHeaders() });
    expect(deleteKeys.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'PATCH']);
    await expectError(deleteKeys, 405, undefined, 'OpenAIErrorResponse');
  });

  it('an admin error is in the admin (OpenAI) shape whatever Anthropic headers the request carries', async () => {
    const anthropicHeaders = { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' };
    const wrongMethod = await fetch(`${gw.url}/admin/keys/key_x`, { method: 'POST', headers: anthropicHeaders });
    await expectError(wrongMethod, 405, undefined, 'OpenAIErrorResponse');
    await expectError(await fetch(`${gw.url}/admin/nothing`, { headers: anthropicHeaders }), 404, undefined, 'OpenAIErrorResponse');
    const unauthorized = await fetch(`${gw.url}/admin/accounts`, { headers: { ...anthropicHeaders, authorization: 'Bearer wrong' } });
    await expectError(unauthorized, 401, 'adminListAccounts', 'OpenAIErrorResponse');
  });

  it('an admin body is read only after the admin key: "", "{" and a wrong type are a 401 without it', async () => {
    for (const [body, type] of [['', 'application/json'], ['{', 'application/json'], ['x=1', 'text/plain']]) {
      const res = await post('/admin/accounts', body, { authorization: `Bearer ${gw.key}`, 'content-type': type });
      expect((await expectError(res, 401, 'adminCreateAccount', 'OpenAIErrorResponse')).error.type).toBe('authentication_error');
    }
    const withKey = await post('/admin/accounts', '{', { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' });
    expect((await expectError(withKey, 400, 'adminCreateAccount', 'OpenAIErrorResponse')).error.message).toMatch(/JSON/);
  });

  it('an empty model id is a 404 model_not_found on all three completion routes', async () => {
    const cases = [
      ['/v1/chat/completions', { model: '', messages: hello }, chatHeaders(), 'createChatCompletion', 'OpenAIErrorResponse'],
      ['/v1/messages', { model: '', max_tokens: 5, messages: hello }, msgHeaders(), 'createMessage', 'AnthropicErrorResponse'],
      ['/v1/responses', { model: '', input: 'Hello' }, chatHeaders(), 'createResponse', 'OpenAIErrorResponse'],
    ] as const;
    for (const [path, body, headers, operationId, schema] of cases) {
      const answer = await expectError(await post(path, JSON.stringify(body), headers), 404, operationId, schema);
      if (schema === 'OpenAIErrorResponse') expect(answer.error.code).toBe('model_not_found');
      else expect(answer.error.type).toBe('not_found_error');
    }
  });

  it('a Responses request without input is a 400 naming input (the document requires it too)', async () => {
    const body = await expectError(await post('/v1/responses', JSON.stringify({ model: 'local-haiku' }), chatHeaders()), 400, 'createResponse', 'OpenAIErrorResponse');
    expect(body.error.param).toBe('input');
  });

  it('answers GET / and HEAD / with 200 and a request id', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${gw.url}/`, { method });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    }
  });
});
