/**
 * What an operator relies on, on a real `switchyard serve` process: liveness and readiness
 * probes, /metrics behind a bearer token, one structured log line per request (without content
 * or credentials), and SIGHUP reloading the config file, its catalog and its identity provider's
 * settings (`oidc:`; a broken file is logged and what runs kept).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { GATEWAY_AUDIENCE, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';

const ADMIN = 'sk-admin-operations';
const METRICS_TOKEN = 'metrics-token-0123456789';
const model = (id: string) => `
  - id: ${id}
    provider: local
    upstream_model: local-haiku
    price: { input: 1, output: 5 }
    tokens_per_second: 0`;
const catalog = (...ids: string[]) => `providers:\n  local: { type: local }\nmodels:${ids.map(model).join('')}\n`;

describe('operator signals', () => {
  let dir: string;
  let gw: GatewayProcess;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-ops-'));
    writeFileSync(join(dir, 'catalog.yaml'), catalog('local-one'));
    gw = await startGatewayProcess({
      SWITCHYARD_DATA_DIR: join(dir, 'data'),
      SWITCHYARD_CONFIG: join(dir, 'catalog.yaml'),
      SWITCHYARD_ADMIN_KEY: ADMIN,
      SWITCHYARD_METRICS_TOKEN: METRICS_TOKEN,
    });
    const post = async (path: string, body: unknown) =>
      (await (await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
    const account = await post('/admin/accounts', { name: 'ops', balance: 1_000_000_000 });
    accountId = account.id;
    ({ key } = await post('/admin/keys', { account_id: account.id }));
  }, 90_000);
  afterAll(async () => {
    gw?.proc.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const models = async () => ((await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).data.map((m: any) => m.id);
  const logged = async (msg: string, count = 1) => {
    for (let i = 0; i < 100 && gw.logs().filter((l) => l.msg === msg).length < count; i++) await new Promise((r) => setTimeout(r, 100));
    return gw.logs().filter((l) => l.msg === msg);
  };

  it('answers /healthz and /readyz, with the checks', async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { draining: 'false', database: 'ok' } });
  });

  it('guards /metrics with the bearer token when one is set', async () => {
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-000000' } })).status).toBe(401);
    const ok = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('switchyard_');
  });

  it('logs one line per request: who, what, tokens, cost, how it ended; no content, no credentials', async () => {
    const secretContent = 'a-sentence-only-the-client-knows';
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-one', max_tokens: 8, messages: [{ role: 'user', content: secretContent }] }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const lines = (await logged('request', 1)).filter((l) => l.requestId === requestId);
    for (let i = 0; i < 50 && lines.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      lines.push(...gw.logs().filter((l) => l.msg === 'request' && l.requestId === requestId));
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      account: expect.stringMatching(/^acct_/),
      keyId: expect.stringMatching(/^key_/),
      model: 'local-one',
      served: 'local-one',
      attempts: 1,
      stream: false,
      outputTokens: 8,
      ended: 'ok',
    });
    expect(lines[0].inputTokens).toBeGreaterThan(0);
    expect(BigInt(lines[0].costNd)).toBeGreaterThan(0n);
    const all = JSON.stringify(gw.logs());
    expect(all).not.toContain(secretContent);
    expect(all).not.toContain(key);
    expect(all).not.toContain(ADMIN);
  });

  it('SIGHUP reloads a valid catalog for new requests, and keeps the running one when the new one is invalid', async () => {
    expect(await models()).toEqual(['local-one']);
    writeFileSync(join(dir, 'catalog.yaml'), catalog('local-one', 'local-two'));
    gw.proc.kill('SIGHUP');
    expect(await logged('SIGHUP: configuration reloaded')).toHaveLength(1);
    expect((await models()).sort()).toEqual(['local-one', 'local-two']);

    writeFileSync(join(dir, 'catalog.yaml'), 'providers: {}\nmodels:\n  - id: broken\n    provider: nowhere\n');
    gw.proc.kill('SIGHUP');
    const [refused] = await logged('SIGHUP: the new configuration is invalid; the running one is kept');
    expect(refused.error).toContain('catalog.yaml');
    expect((await models()).sort()).toEqual(['local-one', 'local-two']);
    expect(gw.proc.exitCode).toBeNull();
  });

  describe('SIGHUP and the identity provider (oidc:)', () => {
    let issuer: TestIssuer;
    beforeAll(async () => {
      issuer = await startTestIssuer({ olga: { email: 'olga@acme.test', groups: ['engineering'] } });
    });
    afterAll(async () => issuer?.close());

    const oidc = (policy: string) => `oidc:\n  issuer: ${issuer.issuer}\n  audience: ${GATEWAY_AUDIENCE}\n  default_account: ${accountId}\n${policy}`;
    const reload = async (text: string, msg = 'SIGHUP: configuration reloaded') => {
      const seen = gw.logs().filter((l) => l.msg === msg).length;
      writeFileSync(join(dir, 'catalog.yaml'), text);
      gw.proc.kill('SIGHUP');
      const lines = await logged(msg, seen + 1);
      expect(lines).toHaveLength(seen + 1);
      return lines.at(-1)!;
    };
    const chat = async (token: string, model: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }] }),
      });

    it('turns tokens on, changes their policies, keeps them through a broken file, and turns them off', async () => {
      const { accessToken } = await issuer.signIn('olga');
      // Started without oidc: a token is an unknown key.
      expect((await chat(accessToken, 'local-one')).status).toBe(401);

      expect(await reload(catalog('local-one', 'local-two') + oidc(''))).toMatchObject({ oidc: 'reloaded' });
      expect((await chat(accessToken, 'local-two')).status).toBe(200);

      // The group's policy comes with the next reload: engineering may use local-one only.
      const narrowed = catalog('local-one', 'local-two') + oidc('  groups:\n    engineering: { allowed_models: [local-one] }\n');
      expect(await reload(narrowed)).toMatchObject({ oidc: 'reloaded' });
      expect((await chat(accessToken, 'local-two')).status).toBe(403);
      expect((await chat(accessToken, 'local-one')).status).toBe(200);
      // The same settings again: kept as they run.
      expect(await reload(narrowed)).toMatchObject({ oidc: 'unchanged' });

      // A policy naming a model the catalog lacks: the file is refused, nothing changes.
      const refused = await reload(catalog('local-one', 'local-two') + oidc('  groups:\n    engineering: { allowed_models: [no-such-model] }\n'), 'SIGHUP: the new configuration is invalid; the running one is kept');
      expect(refused.error).toContain('no-such-model');
      expect((await chat(accessToken, 'local-two')).status).toBe(403);
      expect((await chat(accessToken, 'local-one')).status).toBe(200);

      // Without the section, tokens are refused again; API keys never stopped working.
      expect(await reload(catalog('local-one', 'local-two'))).toMatchObject({ oidc: 'off' });
      expect((await chat(accessToken, 'local-one')).status).toBe(401);
      expect((await chat(key, 'local-one')).status).toBe(200);

      // Each reload is in the audit log with the identity settings before and after.
      const audit: any = await (await fetch(`${gw.url}/admin/audit?action=config.reload&limit=10`, { headers: { authorization: `Bearer ${ADMIN}` } })).json();
      const [off, , narrowing, on] = audit.data;
      expect(off).toMatchObject({ actor: { kind: 'system' }, before: { oidc: { issuer: issuer.issuer, groups: ['engineering'] } }, after: { oidc: null } });
      expect(narrowing.after.oidc).toMatchObject({ issuer: issuer.issuer, audience: [GATEWAY_AUDIENCE], groups: ['engineering'] });
      expect(on).toMatchObject({ before: { oidc: null }, after: { oidc: { issuer: issuer.issuer, groups: [] } } });
    });
  });
});
