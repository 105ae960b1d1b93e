/**
 * Keys restricted to some models, over real HTTP with the official SDKs: the admin API sets and
 * checks the list, `GET /v1/models` shows only those models, any other model is a 403 in the
 * caller's shape that costs nothing, and default fallbacks and fast variants outside the list are
 * skipped.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_TRIGGER } from '../../src/providers/local/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

const admin = (path: string, method: string, body?: unknown) => gw.admin(path, method, body);

async function restrictedKey(allowed: string[] | null) {
  const { accountId } = await gw.newAccount();
  const res = await admin('/admin/keys', 'POST', { account_id: accountId, allowed_models: allowed });
  const body: any = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  expect(await bodyErrors('adminCreateKey', 201, body)).toEqual([]);
  return { accountId, key: body.key as string, id: body.id as string, body };
}

const ask = [{ role: 'user' as const, content: 'Hello' }];

describe('allowed models', () => {
  it('are set and changed through the admin API, checked against the catalog', async () => {
    const { body, id } = await restrictedKey(['local-haiku', 'local-haiku']);
    expect(body.allowed_models).toEqual(['local-haiku']);
    const changed: any = await (await admin(`/admin/keys/${id}`, 'PATCH', { allowed_models: ['local-sonnet', 'local-haiku'] })).json();
    expect(changed.allowed_models).toEqual(['local-sonnet', 'local-haiku']);
    expect(await bodyErrors('adminUpdateKey', 200, changed)).toEqual([]);
    const cleared: any = await (await admin(`/admin/keys/${id}`, 'PATCH', { allowed_models: null })).json();
    expect(cleared.allowed_models).toBeNull();
    const { accountId } = await gw.newAccount();
    for (const [bad, param] of [[['gpt-nope'], 'allowed_models[0]'], [[], 'allowed_models'], [['local-haiku', 7], 'allowed_models[1]']] as const) {
      const res = await admin('/admin/keys', 'POST', { account_id: accountId, allowed_models: bad });
      const err: any = await res.json();
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(err.error.param).toBe(param);
    }
  });

  it('a restricted key lists and reaches only its models; others are a 403 that costs nothing', async () => {
    const { key, accountId } = await restrictedKey(['local-haiku']);
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const an = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const listed = [];
    for await (const m of oa.models.list()) listed.push(m.id);
    // Its model's aliases are listed with it.
    expect(listed).toEqual(['local-haiku', 'local-haiku-latest']);
    expect((await an.models.list()).data.map((m) => m.id)).toEqual(['local-haiku', 'local-haiku-latest']);
    await expect(oa.models.retrieve('local-sonnet')).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    const ok = await oa.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask });
    expect(ok.model).toBe('local-haiku');
    const before = (await gw.ledger.getAccount(accountId))!;
    const chat: any = await oa.chat.completions.create({ model: 'local-sonnet', max_tokens: 5, messages: ask }).catch((e) => e);
    expect(chat).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(chat.code).toBe('model_not_allowed');
    expect(chat.param).toBe('model');
    const messages: any = await an.messages.create({ model: 'local-sonnet', max_tokens: 5, messages: ask }).catch((e) => e);
    expect(messages).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(messages.error.error.type).toBe('permission_error');
    await expect(oa.responses.create({ model: 'local-opus', input: 'Hello', stream: true })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(an.messages.countTokens({ model: 'local-sonnet', messages: ask })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    // An explicit fallback outside the list is refused too, naming it.
    const viaFallback: any = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-haiku', max_tokens: 5, messages: ask, fallbacks: ['local-sonnet'] }),
    });
    expect(viaFallback.status).toBe(403);
    expect((await viaFallback.json()).error.param).toBe('fallbacks.0');
    const after = (await gw.ledger.getAccount(accountId))!;
    expect(after).toMatchObject({ balance: before.balance, held: 0n });
  });

  it('skips a default fallback and a fast variant the key may not use', async () => {
    const { key } = await restrictedKey(['local-opus', 'local-haiku', 'local-sonnet']);
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    // local-sonnet's fast variant is local-sonnet-fast, not in the list: the standard model answers.
    const { data: fast, response } = await oa.chat.completions
      .create({ model: 'local-sonnet', max_tokens: 5, messages: ask, ...({ fast: true } as object) })
      .withResponse();
    expect(fast.model).toBe('local-sonnet');
    expect(response.headers.get('x-switchyard-variant')).toBe('standard');
    // local-opus refuses the trigger; its default chain is sonnet then haiku. With sonnet removed
    // from the list, haiku answers directly.
    const { key: narrow } = await restrictedKey(['local-opus', 'local-haiku']);
    const refusedOnce = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: narrow, maxRetries: 0 }).chat.completions
      .create({ model: 'local-opus', max_tokens: 64, messages: [{ role: 'user', content: REFUSAL_TRIGGER }] })
      .withResponse();
    expect(refusedOnce.data.model).toBe('local-haiku');
    expect(refusedOnce.response.headers.get('x-switchyard-attempts')).toBe('local-opus=refusal, local-haiku=ok');
  });

  it('lists a hidden model the key is restricted to', async () => {
    const { key } = await restrictedKey(['local-sonnet-fast']);
    const ids = [];
    for await (const m of new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key }).models.list()) ids.push(m.id);
    expect(ids).toEqual(['local-sonnet-fast']);
  });
});
