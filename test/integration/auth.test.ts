/**
 * Authentication and the admin API over real HTTP: both credential headers on every client
 * endpoint, 401 in the caller's protocol, keys issued and revoked through the admin API (a
 * revoked key fails on the very next request), keys stored only as hashes.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, schemaErrors } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1) });
});
afterAll(async () => gw?.close());

const hello = [{ role: 'user', content: 'Hello' }];
const json = { 'content-type': 'application/json' };

/** Every client endpoint with a request that succeeds when authenticated. */
const ENDPOINTS: Array<{ operationId: string; method: string; path: string; body?: unknown; anthropic?: boolean }> = [
  { operationId: 'createChatCompletion', method: 'POST', path: '/v1/chat/completions', body: { model: 'local-haiku', max_tokens: 5, messages: hello } },
  { operationId: 'createMessage', method: 'POST', path: '/v1/messages', body: { model: 'local-haiku', max_tokens: 5, messages: hello }, anthropic: true },
  { operationId: 'countMessageTokens', method: 'POST', path: '/v1/messages/count_tokens', body: { model: 'local-haiku', messages: hello }, anthropic: true },
  { operationId: 'createResponse', method: 'POST', path: '/v1/responses', body: { model: 'local-haiku', max_output_tokens: 5, input: 'Hello' } },
  { operationId: 'listModels', method: 'GET', path: '/v1/models' },
  { operationId: 'getModel', method: 'GET', path: '/v1/models/local-haiku' },
  { operationId: 'getBalance', method: 'GET', path: '/v1/balance' },
];

function call(e: (typeof ENDPOINTS)[number], headers: Record<string, string>) {
  return fetch(`${gw.url}${e.path}`, { method: e.method, headers: { ...json, ...headers }, body: e.body ? JSON.stringify(e.body) : undefined });
}

describe('client credentials', () => {
  it.each(ENDPOINTS)('$operationId accepts Authorization: Bearer and x-api-key, and refuses neither or a bad key', async (e) => {
    for (const headers of [{ authorization: `Bearer ${gw.key}` }, { 'x-api-key': gw.key }] as Record<string, string>[]) {
      const res = await call(e, headers);
      expect(res.status, `${JSON.stringify(headers)} ${await res.clone().text()}`).toBe(200);
      expect(await bodyErrors(e.operationId, 200, await res.json())).toEqual([]);
    }
    for (const headers of [{}, { authorization: 'Bearer sk-wrong' }, { 'x-api-key': 'sk-wrong' }] as Record<string, string>[]) {
      const res = await call(e, headers);
      const body: any = await res.json();
      expect(res.status).toBe(401);
      expect(await bodyErrors(e.operationId, 401, body), JSON.stringify(body)).toEqual([]);
      // Anthropic's envelope has a top-level type; OpenAI's has only `error`.
      expect(body.type).toBe(e.anthropic ? 'error' : undefined);
      expect(body.error.type).toBe('authentication_error');
      expect(body.error.message).toMatch(/key/i);
    }
  });

  it('the SDKs see AuthenticationError', async () => {
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-nope', maxRetries: 0 });
    await expect(oa.chat.completions.create({ model: 'local-haiku', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const an = new Anthropic({ baseURL: gw.url, apiKey: 'sk-nope', maxRetries: 0 });
    await expect(an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });
});

describe('admin API', () => {
  const admin = (method: string, path: string, body?: unknown, key = gw.adminKey) =>
    fetch(`${gw.url}${path}`, { method, headers: { ...json, authorization: `Bearer ${key}` }, body: body ? JSON.stringify(body) : undefined });

  it('creates an account and a key; the key works until revoked, and fails on the next request after', async () => {
    const accountRes = await admin('POST', '/admin/accounts', { name: 'acme', balance: 1_000_000_000 });
    const account: any = await accountRes.json();
    expect(accountRes.status).toBe(201);
    expect(await bodyErrors('adminCreateAccount', 201, account)).toEqual([]);

    const keyRes = await admin('POST', '/admin/keys', { account_id: account.id, name: 'ci' });
    const created: any = await keyRes.json();
    expect(keyRes.status).toBe(201);
    expect(await bodyErrors('adminCreateKey', 201, created)).toEqual([]);

    const listRes = await admin('GET', `/admin/keys?account_id=${account.id}`);
    const list: any = await listRes.json();
    expect(await bodyErrors('adminListKeys', 200, list)).toEqual([]);
    expect(list.data.map((k: { id: string }) => k.id)).toEqual([created.id]);
    expect(JSON.stringify(list)).not.toContain(created.key);

    const an = new Anthropic({ baseURL: gw.url, apiKey: created.key, maxRetries: 0 });
    const msg = await an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] });
    expect(msg.stop_reason).toBe('max_tokens');

    const revoked = await admin('DELETE', `/admin/keys/${created.id}`);
    const revokedBody: any = await revoked.json();
    expect(revoked.status).toBe(200);
    expect(await bodyErrors('adminRevokeKey', 200, revokedBody)).toEqual([]);
    expect(revokedBody.revoked_at).toBeTruthy();
    await expect(an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.key, maxRetries: 0 });
    await expect(oa.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  // Another instance, or an operator's SQL, revokes it in the database, behind this instance's key
  // cache: the database announces it (the leases migration's trigger), and the key cannot spend
  // here from the next request on, a hold served from a balance lease included. On SQLite the
  // gateway is its file's only writer (the data directory is locked to it): there is no behind.
  it.runIf(dbTargets.at(-1)!.name === 'postgres')('a key revoked by another instance (in the database, behind this cache) can no longer spend', async () => {
    const account: any = await (await admin('POST', '/admin/accounts', { name: 'elsewhere', balance: 1_000_000_000 })).json();
    const created: any = await (await admin('POST', '/admin/keys', { account_id: account.id })).json();
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: created.key, maxRetries: 0 });
    const an = new Anthropic({ baseURL: gw.url, apiKey: created.key, maxRetries: 0 });
    // Enough requests for the account to be served from a balance lease.
    for (let i = 0; i < 3; i++) await oa.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] });
    await new Promise((r) => setTimeout(r, 200));
    const before = await gw.ledger.getAccount(account.id);

    await gw.ledger.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', created.id).execute();
    await expect(oa.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }))
      .rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    // Every later request asks the database again.
    await expect(an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }))
      .rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(oa.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(await gw.ledger.getAccount(account.id)).toEqual(before);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('stores keys only as hashes', async () => {
    const rows = await gw.ledger.db.selectFrom('api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(gw.key);
    expect(dump).toContain(gw.key.slice(0, 8)); // the display prefix only
  });

  it('refuses the admin API without the admin key, in the OpenAI shape', async () => {
    for (const key of ['', 'sk-admin-wrong', gw.key]) {
      const res = await admin('POST', '/admin/accounts', { name: 'x' }, key);
      const body: any = await res.json();
      expect(res.status).toBe(401);
      expect(await bodyErrors('adminCreateAccount', 401, body)).toEqual([]);
      expect(await schemaErrors('OpenAIErrorResponse', body)).toEqual([]);
    }
    const res = await admin('DELETE', '/admin/keys/key_missing');
    expect(res.status).toBe(404);
    expect(await bodyErrors('adminRevokeKey', 404, await res.json())).toEqual([]);
  });
});
