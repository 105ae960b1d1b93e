/**
 * Identity-provider tokens as credentials, against a real OpenID Connect provider in this process
 * (oidc-provider): tokens it issued pass on both credential headers through the official SDKs of
 * the three protocols, API keys keep working beside them, and every attack is a 401 in the
 * caller's shape that names the reason and never quotes the token.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { exportSPKI, generateKeyPair, base64url } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIdentityConfig, type IdentityConfig } from '../../src/config/identity.js';
import { userIdFor } from '../../src/http/identity/resolve-principal.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { DESKTOP_CLIENT_ID, GATEWAY_AUDIENCE, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { bodyErrors } from '../support/stream-checks.js';

let issuer: TestIssuer;
let gw: TestGateway;
let identity: IdentityConfig;
let acme: string;

beforeAll(async () => {
  issuer = await startTestIssuer({
    alice: { email: 'alice@acme.test', groups: ['engineering'], org: 'acme' },
    bob: { email: 'bob@acme.test', groups: [], org: 'acme' },
    carol: { email: 'carol@other.test', groups: [], org: 'globex' },
    dave: { email: 'dave@acme.test', groups: [], org: 'acme' },
    erin: { email: 'erin@acme.test', groups: [], org: 'acme' },
  });
  // What SWITCHYARD_OIDC_ISSUER and SWITCHYARD_OIDC_AUDIENCE give, with group policies from the file.
  identity = buildIdentityConfig(
    { claims: { organization: 'org_id' }, groups: { engineering: { allowed_models: ['local-haiku', 'local-sonnet'] } }, users: { allowed_models: ['local-haiku'] } },
    { SWITCHYARD_OIDC_ISSUER: issuer.issuer, SWITCHYARD_OIDC_AUDIENCE: `${GATEWAY_AUDIENCE},${DESKTOP_CLIENT_ID}` },
  )!;
  gw = await startTestGateway({ identity });
  acme = (await gw.newAccount(100_000_000_000n, 'acme')).accountId;
  identity.organizations.acme = acme;
});
afterAll(async () => {
  await gw?.close();
  await issuer?.close();
});

const hi = [{ role: 'user' as const, content: 'Hi' }];

describe('tokens from the identity provider', () => {
  it('an access token passes on all three protocols through the official SDKs, on both headers', async () => {
    const { accessToken } = await issuer.signIn('alice');
    const before = await gw.ledger.usageRecords(acme, 100);
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: accessToken, maxRetries: 0 });
    const chat = await openai.chat.completions.create({ model: 'local-sonnet', max_tokens: 5, messages: hi });
    expect(chat.choices[0].message.content).toBeTruthy();
    const response = await openai.responses.create({ model: 'local-haiku', max_output_tokens: 16, input: 'Hi' });
    expect(response.status).toBeTruthy();
    // apiKey travels as x-api-key, authToken as Authorization: Bearer.
    for (const anthropic of [new Anthropic({ baseURL: gw.url, apiKey: accessToken, maxRetries: 0 }), new Anthropic({ baseURL: gw.url, authToken: accessToken, apiKey: null, maxRetries: 0 })]) {
      const msg = await anthropic.messages.create({ model: 'local-haiku', max_tokens: 5, messages: hi });
      expect(msg.type).toBe('message');
    }
    const after = await gw.ledger.usageRecords(acme, 100);
    // Charged to the account alice's organisation maps to, with no key, attributed to alice.
    expect(after.length - before.length).toBe(4);
    const alice = userIdFor(issuer.issuer, 'alice');
    expect(after.slice(0, 4).every((r) => r.keyId === null && r.userId === alice && r.cost > 0n)).toBe(true);
    // Her own spend, and only hers.
    const spend: any = await (await fetch(`${gw.url}/v1/spend?group_by=model`, { headers: { authorization: `Bearer ${accessToken}` } })).json();
    expect(spend.data.reduce((n: number, g: any) => n + g.requests, 0)).toBe(4);
    expect((await gw.ledger.getAccount(acme))!.balance).toBeLessThan(100_000_000_000n);
  });

  it('GET /v1/usage with a token lists the user\'s own requests (whichever token made them), not another user\'s nor a key\'s', async () => {
    const own = async (credential: string) => {
      const res = await fetch(`${gw.url}/v1/usage?limit=100`, { headers: { authorization: `Bearer ${credential}` } });
      const body: any = await res.json();
      expect({ status: res.status, problems: await bodyErrors('listUsage', 200, body) }).toEqual({ status: 200, problems: [] });
      return body.data.map((r: any) => r.request_id) as string[];
    };
    const chat = async (credential: string) =>
      (await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: credential, maxRetries: 0 }).chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: hi }).withResponse()).response.headers.get('x-request-id')!;
    const daveFirst = await chat((await issuer.signIn('dave')).accessToken);
    const erin = await chat((await issuer.signIn('erin')).accessToken);
    const apiKey = (await gw.newAccount(1_000_000_000n, 'a-key')).key;
    const key = await chat(apiKey);
    const later = await issuer.signIn('dave');
    const daveSecond = await chat(later.accessToken);
    await gw.gateway.ledger.settled();
    // Newest first, both of dave's sign-ins' requests; the ID token names the same user.
    expect(await own(later.accessToken)).toEqual([daveSecond, daveFirst]);
    expect(await own(later.idToken)).toEqual([daveSecond, daveFirst]);
    expect(await own((await issuer.signIn('erin')).accessToken)).toEqual([erin]);
    expect(await own(apiKey)).toEqual([key]);
  });

  it('an ID token (a desktop app\'s, audience its client id) passes too', async () => {
    const { idToken } = await issuer.signIn('alice');
    const res = await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${idToken}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).account_id).toBe(acme);
  });

  it('API keys keep working beside tokens', async () => {
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    expect((await openai.models.list()).data.length).toBeGreaterThan(1);
  });

  it('group claims decide the models: a member of engineering may use local-sonnet, others only local-haiku', async () => {
    const bob = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: (await issuer.signIn('bob')).accessToken, maxRetries: 0 });
    await expect(bob.chat.completions.create({ model: 'local-sonnet', max_tokens: 5, messages: hi })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await bob.models.list()).data.map((m) => m.id)).toEqual(['local-haiku', 'local-haiku-latest']);
    await bob.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: hi });
  });

  it('a user whose organisation maps to no account (and no default account) is refused with a 403 naming it', async () => {
    const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${(await issuer.signIn('carol')).accessToken}` } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.message).toContain('"globex"');
  });

  it('users get stable ids from issuer and subject', () => {
    expect(userIdFor(issuer.issuer, 'alice')).toBe(userIdFor(issuer.issuer, 'alice'));
    expect(userIdFor(issuer.issuer, 'alice')).not.toBe(userIdFor('https://other.test', 'alice'));
  });
});

describe('users through the admin API', () => {
  it('lists users seen, disables one (refused at once, a 401 naming it), enables them again, and the audit log has both changes', async () => {
    const { accessToken } = await issuer.signIn('bob');
    const bob = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: accessToken, maxRetries: 0 });
    await bob.models.list();
    const id = userIdFor(issuer.issuer, 'bob');
    const list: any = await (await gw.admin(`/admin/users?account_id=${acme}`)).json();
    expect(await bodyErrors('adminListUsers', 200, list)).toEqual([]);
    expect(list.data.find((u: any) => u.id === id)).toMatchObject({ account_id: acme, subject: 'bob', name: 'bob@acme.test', disabled_at: null });

    const disabled = await gw.admin(`/admin/users/${id}`, 'PATCH', { disabled: true });
    const body: any = await disabled.json();
    expect(disabled.status).toBe(200);
    expect(await bodyErrors('adminUpdateUser', 200, body)).toEqual([]);
    expect(body.disabled_at).toBeTruthy();
    const refused = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': accessToken, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local-haiku', max_tokens: 5, messages: hi }) });
    const refusal: any = await refused.json();
    expect(refused.status).toBe(401);
    expect(refusal).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(refusal.error.message).toMatch(/disabled/);
    await expect(bob.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);

    expect((await gw.admin(`/admin/users/${id}`, 'PATCH', { disabled: false })).status).toBe(200);
    await bob.models.list();

    const audit: any = await (await gw.admin(`/admin/audit?target_id=${id}`)).json();
    expect(await bodyErrors('adminListAudit', 200, audit)).toEqual([]);
    expect(audit.data.map((e: any) => e.action)).toEqual(['user.enable', 'user.disable']);
    expect(audit.data[1]).toMatchObject({ actor: { kind: 'admin_key', id: null }, target_type: 'user', before: { disabled_at: null } });
    expect(audit.data[1].request_id).toMatch(/^req_/);
    expect(audit.data[1].after.disabled_at).toBeTruthy();
  });

  it('records key and account changes with before and after, never the key', async () => {
    const created: any = await (await gw.admin('/admin/keys', 'POST', { account_id: acme, name: 'audited', rpm_limit: 5 })).json();
    await gw.admin(`/admin/keys/${created.id}`, 'PATCH', { rpm_limit: 9 });
    await gw.admin(`/admin/keys/${created.id}`, 'DELETE');
    await gw.admin(`/admin/accounts/${acme}/credits`, 'POST', { amount: 7, reason: 'audit test' });
    const keyLog: any = await (await gw.admin(`/admin/audit?target_type=key&target_id=${created.id}`)).json();
    expect(keyLog.data.map((e: any) => e.action)).toEqual(['key.revoke', 'key.update', 'key.create']);
    expect(keyLog.data[1].before.rpm_limit).toBe(5);
    expect(keyLog.data[1].after.rpm_limit).toBe(9);
    expect(JSON.stringify(keyLog)).not.toContain(created.key);
    const credit: any = await (await gw.admin(`/admin/audit?action=account.credit&target_id=${acme}&limit=1`)).json();
    expect(credit.data[0].after.balance - credit.data[0].before.balance).toBe(7);
  });
});

describe('attacks: each is a 401 in the caller\'s shape naming the reason, never quoting the token', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const base = { sub: 'alice', org_id: 'acme', groups: ['engineering'] };
  const cases: Array<{ name: string; token: () => Promise<string>; reason: RegExp }> = [
    { name: 'expired', token: () => issuer.sign({ ...base, iat: now() - 600, exp: now() - 120 }), reason: /expired/ },
    { name: 'not yet valid', token: () => issuer.sign({ ...base, nbf: now() + 120 }), reason: /not valid yet/ },
    { name: 'wrong audience', token: () => issuer.sign({ ...base, aud: 'api://another-service' }), reason: /not meant for this gateway/ },
    { name: 'wrong issuer', token: () => issuer.sign({ ...base, iss: 'https://evil.example' }), reason: /not issued by/ },
    {
      name: 'unknown key',
      token: async () => issuer.sign(base, { key: (await generateKeyPair('RS256')).privateKey, header: { kid: 'attacker-key' } }),
      reason: /key the issuer does not publish/,
    },
    {
      name: 'a key the issuer does not publish under its own kid',
      token: async () => issuer.sign(base, { key: (await generateKeyPair('RS256')).privateKey }),
      reason: /signature does not verify/,
    },
    {
      name: 'tampered payload',
      token: async () => {
        const [h, , s] = (await issuer.sign(base)).split('.');
        return [h, base64url.encode(JSON.stringify({ ...base, sub: 'mallory', iss: issuer.issuer, aud: GATEWAY_AUDIENCE, exp: now() + 300 })), s].join('.');
      },
      reason: /signature does not verify/,
    },
    {
      name: 'tampered signature',
      token: async () => {
        const [h, p, s] = (await issuer.sign(base)).split('.');
        const sig = Buffer.from(s, 'base64url');
        sig[10] ^= 0xff;
        return [h, p, sig.toString('base64url')].join('.');
      },
      reason: /signature does not verify/,
    },
    {
      name: 'alg none',
      token: async () => {
        const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: issuer.kid }));
        const payload = base64url.encode(JSON.stringify({ ...base, iss: issuer.issuer, aud: GATEWAY_AUDIENCE, exp: now() + 300 }));
        return `${header}.${payload}.`;
      },
      reason: /algorithm is not allowed/,
    },
    {
      name: 'HS256 keyed with the issuer\'s public key',
      token: async () => {
        const pem = await exportSPKI(issuer.publicKey);
        return issuer.sign(base, { alg: 'HS256', key: new TextEncoder().encode(pem) });
      },
      reason: /algorithm is not allowed/,
    },
    { name: 'no exp', token: () => issuer.sign({ ...base, exp: undefined }), reason: /no exp claim/ },
  ];

  it.each(cases)('$name', async ({ token, reason }) => {
    const t = await token();
    const calls: Array<{ operationId: string; url: string; init: RequestInit; anthropic: boolean }> = [
      { operationId: 'createChatCompletion', url: '/v1/chat/completions', init: { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local-haiku', messages: hi }) }, anthropic: false },
      { operationId: 'createMessage', url: '/v1/messages', init: { method: 'POST', headers: { 'x-api-key': t, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local-haiku', max_tokens: 5, messages: hi }) }, anthropic: true },
      { operationId: 'createResponse', url: '/v1/responses', init: { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local-haiku', input: 'Hi' }) }, anthropic: false },
    ];
    for (const c of calls) {
      const res = await fetch(`${gw.url}${c.url}`, c.init);
      const text = await res.text();
      expect(res.status, text).toBe(401);
      const body = JSON.parse(text);
      expect(await bodyErrors(c.operationId, 401, body)).toEqual([]);
      expect(body.type).toBe(c.anthropic ? 'error' : undefined);
      expect(body.error.type).toBe('authentication_error');
      expect(body.error.message).toMatch(reason);
      for (const part of t.split('.').filter((p) => p.length > 8)) expect(text).not.toContain(part);
    }
  });

  it('the SDKs see AuthenticationError', async () => {
    const expired = await issuer.sign({ ...base, exp: now() - 120 });
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: expired, maxRetries: 0 });
    await expect(oa.chat.completions.create({ model: 'local-haiku', messages: hi })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const an = new Anthropic({ baseURL: gw.url, apiKey: expired, maxRetries: 0 });
    await expect(an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: hi })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('a flood of unknown kids does not hammer the issuer: its keys are fetched again at most once per cooldown', async () => {
    const before = issuer.jwksFetches();
    const { privateKey } = await generateKeyPair('RS256');
    const results = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const t = await issuer.sign(base, { key: privateKey, header: { kid: `flood-${i}` } });
        return (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${t}` } })).status;
      }),
    );
    expect(new Set(results)).toEqual(new Set([401]));
    expect(issuer.jwksFetches() - before).toBeLessThanOrEqual(1);
  });
});
