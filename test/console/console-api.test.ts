/**
 * The console's server side over HTTP, without a browser (so it runs everywhere): sign-in for
 * each role, the session cookie, CSRF and Origin checks on writes, what each role may call through
 * /console/api, a revoked key ending its holder's session, and sign-out.
 */
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { consoleBuilt } from './console-support.js';

let gw: TestGateway;

beforeAll(async () => {
  await consoleBuilt();
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

interface Signed {
  cookie: string;
  csrf: string;
  body: any;
}

async function signIn(key: string, origin = gw.url): Promise<Signed> {
  const res = await fetch(`${gw.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ key }) });
  expect(res.status).toBe(201);
  const setCookie = res.headers.get('set-cookie')!;
  const body = (await res.json()) as any;
  return { cookie: setCookie.split(';')[0]!, csrf: body.csrf_token, body };
}

function call(s: Signed | undefined, method: string, path: string, opts: { body?: unknown; csrf?: string | null; origin?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (s) headers.cookie = s.cookie;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const csrf = opts.csrf === undefined ? s?.csrf : opts.csrf;
  if (csrf) headers['x-csrf-token'] = csrf;
  const origin = opts.origin === undefined ? gw.url : opts.origin;
  if (origin) headers.origin = origin;
  return fetch(`${gw.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
}

/** A GET with the path sent as written (fetch would resolve its dot segments first). */
function rawGet(path: string, cookie: string): Promise<number> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    get({ host: url.hostname, port: url.port, path, headers: { cookie } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    }).on('error', reject);
  });
}

describe('the console API', () => {
  it('serves the page under a strict Content-Security-Policy, and only the bundle\'s files', async () => {
    const page = await fetch(`${gw.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'; script-src 'self'; style-src 'self'/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<script type="module" src="/console/app.js">');
    expect((await fetch(`${gw.url}/console/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    const missing = await fetch(`${gw.url}/console/..%2fpackage.json`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.message).toMatch(/no console file/);
  });

  it('signs in the operator with an HttpOnly, SameSite=Strict cookie, and refuses a bad key or a foreign origin', async () => {
    const res = await fetch(`${gw.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: gw.url }, body: JSON.stringify({ key: gw.adminKey }) });
    expect(res.status).toBe(201);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^switchyard_console=[A-Za-z0-9_-]{43}; path=\/console; samesite=strict; httponly$/);
    expect(cookie).not.toContain(gw.adminKey);
    expect(await res.json()).toMatchObject({ role: 'operator', account_id: null, csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });

    const bad = await fetch(`${gw.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: gw.url }, body: JSON.stringify({ key: 'sk-sy-nope' }) });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as any).error.message).toMatch(/not valid/);
    for (const origin of [undefined, 'https://evil.example']) {
      const foreign = await fetch(`${gw.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...(origin ? { origin } : {}) }, body: JSON.stringify({ key: gw.adminKey }) });
      expect(foreign.status).toBe(403);
    }
  });

  it("runs the admin API's own handlers for the operator, writes only with the CSRF token and the gateway's origin", async () => {
    const op = await signIn(gw.adminKey);
    const viaConsole = await call(op, 'GET', `/console/api/admin/accounts/${gw.accountId}`);
    expect(viaConsole.status).toBe(200);
    expect(viaConsole.headers.get('cache-control')).toBe('no-store');
    expect(await viaConsole.json()).toEqual(await (await gw.admin(`/admin/accounts/${gw.accountId}`)).json());
    // The API's validation and error shapes, unchanged.
    const invalid = await call(op, 'POST', '/console/api/admin/accounts', { body: { name: 'x', balance: 'lots' } });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as any).error).toMatchObject({ type: 'invalid_request_error' });

    const before = ((await (await gw.admin('/admin/accounts')).json()) as any).data.length;
    expect((await call(op, 'POST', '/console/api/admin/accounts', { body: { name: 'forged' }, csrf: null })).status).toBe(403);
    expect((await call(op, 'POST', '/console/api/admin/accounts', { body: { name: 'forged' }, csrf: 'x'.repeat(43) })).status).toBe(403);
    expect((await call(op, 'POST', '/console/api/admin/accounts', { body: { name: 'forged' }, origin: 'https://evil.example' })).status).toBe(403);
    expect((await call(op, 'POST', '/console/api/admin/accounts', { body: { name: 'forged' }, origin: null })).status).toBe(403);
    expect(((await (await gw.admin('/admin/accounts')).json()) as any).data.length).toBe(before);
    const made = await call(op, 'POST', '/console/api/admin/accounts', { body: { name: 'via-console' } });
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({ name: 'via-console' });
    // Only the admin API: not the client API, and no way around the prefix.
    expect((await call(op, 'GET', '/console/api/v1/models')).status).toBe(403);
    for (const raw of ['/console/api/admin/../v1/models', '/console/api/admin/./accounts', '/console/api/admin//accounts']) expect(await rawGet(raw, op.cookie), raw).toBe(404);
  });

  it("gives a key holder their own balance only, and ends the session when the key is revoked", async () => {
    const { accountId, key } = await gw.newAccount(7_000_000_000n, 'holder');
    const holder = await signIn(key);
    expect(holder.body).toMatchObject({ role: 'key_holder', account_id: accountId });
    const balance = await call(holder, 'GET', '/console/api/v1/balance');
    expect(balance.status).toBe(200);
    expect(await balance.json()).toMatchObject({ account_id: accountId, balance: 7_000_000_000 });
    for (const [method, path] of [
      ['GET', '/console/api/admin/accounts'],
      ['GET', `/console/api/admin/accounts/${gw.accountId}`],
      ['POST', '/console/api/v1/chat/completions'],
      ['GET', '/console/api/v1/models'],
    ] as const) {
      const res = await call(holder, method, path, method === 'POST' ? { body: { model: 'local-haiku', messages: [{ role: 'user', content: 'hi' }] } } : {});
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const keyId = ((await (await gw.admin(`/admin/keys?account_id=${accountId}`)).json()) as any).data[0].id;
    await gw.admin(`/admin/keys/${keyId}`, 'DELETE');
    expect((await call(holder, 'GET', '/console/api/v1/balance')).status).toBe(401);
  });

  it('signs out with the CSRF token; the cookie then opens nothing', async () => {
    const op = await signIn(gw.adminKey);
    expect((await call(op, 'DELETE', '/console/session', { csrf: null })).status).toBe(403);
    const out = await call(op, 'DELETE', '/console/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^switchyard_console=;/);
    // No session: an answer (204), not an error the browser would log.
    expect((await call(op, 'GET', '/console/session')).status).toBe(204);
    expect((await call(op, 'GET', '/console/api/admin/accounts')).status).toBe(401);
    expect((await call(undefined, 'GET', '/console/api/admin/accounts')).status).toBe(401);
  });
});
