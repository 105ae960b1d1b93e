/**
 * The usage webhook across real `switchyard serve` processes and the fake upstream: a gateway
 * SIGKILLed while records wait undelivered (its receiver refusing them) is restarted on the same
 * database, and every record arrives (some maybe twice, none missing); two gateways on one
 * PostgreSQL deliver each record at least once, one at a time, and when the one delivering is
 * killed the other takes over.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { PG_URL } from '../ledger/db-targets.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'sk-admin-usage-webhook-0123456789';

let fake: FakeUpstream;
let receiver: WebhookReceiver;
let dir: string;
const procs: GatewayProcess[] = [];
const schemas: string[] = [];

beforeAll(async () => {
  fake = await startFakeUpstream();
  receiver = await startWebhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'switchyard-webhook-'));
  // JSON is YAML: the catalog the in-process suites use, pointing at this fake.
  writeFileSync(join(dir, 'catalog.yaml'), JSON.stringify(fakeCatalogDocument(fake)));
});
afterAll(async () => {
  for (const p of procs) p.proc.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await receiver?.close();
  await fake?.close();
  if (PG_URL && schemas.length > 0) {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await client.end();
  }
  rmSync(dir, { recursive: true, force: true });
});

function baseEnv(database: Record<string, string>): Record<string, string> {
  return {
    ...database,
    SWITCHYARD_CONFIG: join(dir, 'catalog.yaml'),
    [FAKE_KEY_ENV]: 'sk-fake-upstream',
    SWITCHYARD_ADMIN_KEY: ADMIN,
    SWITCHYARD_USAGE_WEBHOOK_URL: receiver.url,
    SWITCHYARD_USAGE_WEBHOOK_DELAY_MS: '1500',
    SWITCHYARD_USAGE_WEBHOOK_BATCH: '2',
    SWITCHYARD_USAGE_WEBHOOK_CLAIM_MS: '2000',
  };
}

async function start(env: Record<string, string>): Promise<GatewayProcess> {
  const p = await startGatewayProcess(env);
  procs.push(p);
  return p;
}

async function fundedKey(gw: GatewayProcess): Promise<string> {
  const post = async (path: string, body: unknown) =>
    (await (await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
  const account = await post('/admin/accounts', { name: 'webhook', balance: 1_000_000_000 });
  return (await post('/admin/keys', { account_id: account.id })).key;
}

async function chat(gw: GatewayProcess, key: string): Promise<string> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'up-openai', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await res.text();
  expect(res.status).toBe(200);
  return res.headers.get('x-request-id')!;
}

const count = (id: string) => receiver.delivered().filter((r) => r.request_id === id).length;
const allArrived = (ids: string[]) => () => ids.every((id) => count(id) > 0);

const killTargets: Array<[string, () => Record<string, string>]> = [['sqlite', () => ({ SWITCHYARD_EMBEDDED_DB: 'sqlite', SWITCHYARD_DATA_DIR: join(dir, 'sqlite') })]];
if (PG_URL) {
  killTargets.push(['postgres', () => {
    const schema = `webhook_kill_${process.pid}_${Date.now()}`;
    schemas.push(schema);
    return { DATABASE_URL: PG_URL!, SWITCHYARD_DB_SCHEMA: schema, SWITCHYARD_DATA_DIR: join(dir, 'pg-kill') };
  }]);
}

describe.each(killTargets)('usage webhook: SIGKILL with records undelivered, then a restart (%s)', (_name, database) => {
  it('every record arrives after the restart, none missing', async () => {
    receiver.posts.length = 0;
    // The first batch is taken, then the receiver refuses everything.
    receiver.answer((_p, n) => ({ status: n === 1 ? 200 : 503 }));
    const env = baseEnv(database());
    const first = await start(env);
    const key = await fundedKey(first);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await chat(first, key));
    await receiver.until(() => receiver.posts.length >= 3, 30_000, 'a delivery and two refused tries');
    first.proc.kill('SIGKILL');
    await first.exited;
    const before = ids.filter((id) => count(id) > 0);
    expect(before.length).toBeLessThan(ids.length);

    receiver.answer(() => ({ status: 200 }));
    const second = await start(env);
    await receiver.until(allArrived(ids), 90_000, 'every record after the restart');
    console.log(`${_name}: ${before.length} of ${ids.length} delivered before SIGKILL; after the restart ${ids.map(count).join(',')} deliveries each`);
    for (const id of ids) expect(count(id)).toBeGreaterThanOrEqual(1);
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 150_000);
});

describe.runIf(PG_URL)('usage webhook: two gateways on one PostgreSQL', () => {
  it('deliver each record at least once, not all twice; the other takes over when the one delivering is killed', async () => {
    receiver.posts.length = 0;
    receiver.answer(() => ({ status: 200 }));
    const schema = `webhook_pair_${process.pid}_${Date.now()}`;
    schemas.push(schema);
    const a = await start(baseEnv({ DATABASE_URL: PG_URL!, SWITCHYARD_DB_SCHEMA: schema, SWITCHYARD_DATA_DIR: join(dir, 'pair-a') }));
    const b = await start(baseEnv({ DATABASE_URL: PG_URL!, SWITCHYARD_DB_SCHEMA: schema, SWITCHYARD_DATA_DIR: join(dir, 'pair-b') }));
    const key = await fundedKey(a);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await chat(i % 2 ? b : a, key));
    await receiver.until(allArrived(ids), 60_000, 'every record of both gateways');
    const counts = ids.map(count);
    console.log(`two gateways: deliveries per record ${counts.join(',')}`);
    expect(counts.every((n) => n >= 1)).toBe(true);
    expect(counts.some((n) => n === 1)).toBe(true);
    expect(counts.reduce((s, n) => s + n, 0)).toBeLessThan(2 * ids.length);

    const delivering = (p: GatewayProcess) => p.logs().filter((l) => l.msg === 'usage webhook: this instance delivers').length;
    const [holder, other] = delivering(a) > 0 ? [a, b] : [b, a];
    expect(delivering(holder)).toBe(1);
    expect(delivering(other)).toBe(0);
    holder.proc.kill('SIGKILL');
    await holder.exited;
    const later: string[] = [];
    for (let i = 0; i < 4; i++) later.push(await chat(other, key));
    await receiver.until(allArrived(later), 60_000, 'the survivor\'s records');
    expect(delivering(other)).toBe(1);
    other.proc.kill('SIGTERM');
    expect(await other.exited).toBe(0);
  }, 150_000);
});

describe('usage webhook: settings the start refuses', () => {
  it('names the variable: a secret not in whsec_ form, a delay not longer than the statement timeout, a URL that is not http(s)', async () => {
    const env = baseEnv({ SWITCHYARD_DATA_DIR: 'memory://' });
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ SWITCHYARD_USAGE_WEBHOOK_SECRET: 'not-a-whsec-secret' }, /SWITCHYARD_USAGE_WEBHOOK_SECRET must be "whsec_"/],
      [{ SWITCHYARD_USAGE_WEBHOOK_DELAY_MS: '1000' }, /SWITCHYARD_USAGE_WEBHOOK_DELAY_MS \(1000\) must be longer than the database statement timeout \(1000 ms\)/],
      [{ SWITCHYARD_USAGE_WEBHOOK_URL: 'ftp://example.com/hook' }, /SWITCHYARD_USAGE_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL/],
    ];
    for (const [extra, message] of cases) {
      const started = startGatewayProcess({ ...env, ...extra, SWITCHYARD_EMBEDDED_DB: 'sqlite' });
      await expect(started).rejects.toThrow(message);
    }
  }, 60_000);
});
