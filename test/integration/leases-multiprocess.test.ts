/**
 * Balance leases (issue 37) across real gateway processes (`src/main.ts serve`) on one PostgreSQL
 * schema: three instances on one account while its balance runs dry (exactly what the balance
 * pays for is served, nothing overdrawn, journal = balances, and after SIGTERM no lease or hold is
 * left); two instances where one holds a lease on a small balance and the other needs more than is
 * left outside it (the lease comes back, the request is served); a key revoked through one instance
 * refused at once by another serving it from its lease; and an instance killed with SIGKILL, whose
 * lease another instance's reaper gives back at its expiry, reporting the requests it was running.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load-config.js';
import { openaiChat } from '../../src/protocols/openai-chat/index.js';
import { pgTarget, type OpenedTarget } from '../ledger/db-targets.js';
import { exactCostConfig, holdFor, waitFor } from '../ledger/http-billing.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';

/** local-haiku priced so that a request capped at max_tokens costs exactly its hold. */
const CONFIG = exactCostConfig();
const ADMIN = 'sk-admin-leases-test-0123456789';

/** A request as the SDKs send it: a 503 (the database's one-second wait under this burst) is retried after retry-after. */
async function send(url: string, key: string, body: object): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    if (res.status !== 503 || attempt === 8) return res;
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000 * (0.5 + Math.random())));
  }
}

/** Runs `n` tasks with at most `width` at once. */
async function pool<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await task(i);
    }
  }));
  return out;
}

/**
 * How many milliseconds after a revocation committed its key was first refused (401) here: the
 * announcement reaches the other instance in about a millisecond, so a request sent at once is
 * refused, or the one just after it. Every request after the first 401 is refused too.
 */
async function refusedWithin(url: string, key: string): Promise<number> {
  const from = performance.now();
  for (;;) {
    const res = await send(url, key, { model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] });
    await res.arrayBuffer();
    if (res.status === 401) break;
    expect(res.status).toBe(200);
    if (performance.now() - from > 1_000) throw new Error('the revoked key was still served after a second');
  }
  const took = performance.now() - from;
  for (let i = 0; i < 3; i++) expect((await send(url, key, { model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] })).status).toBe(401);
  return took;
}

describe.runIf(pgTarget)('balance leases across gateway processes on postgres', () => {
  let t: OpenedTarget;
  let dir: string;
  let env: Record<string, string>;
  const started: GatewayProcess[] = [];
  const start = async (extra: Record<string, string> = {}) => {
    const p = await startGatewayProcess({ ...env, ...extra });
    started.push(p);
    return p;
  };
  const stop = async (p: GatewayProcess) => {
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  };
  const small = { model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Write a long story about three gateways sharing one ledger.' }] };
  const holdOf = (body: object) => holdFor(loadConfigFile(join(dir, 'catalog.yaml')), openaiChat, body as Record<string, unknown>).hold;
  const leaseRows = (accountId: string) => t.ledger.db.selectFrom('leases').selectAll().where('account_id', '=', accountId).execute();

  beforeAll(async () => {
    t = await pgTarget!.open();
    dir = mkdtempSync(join(tmpdir(), 'switchyard-leases-'));
    writeFileSync(join(dir, 'catalog.yaml'), CONFIG);
    env = { DATABASE_URL: t.databaseUrl!, SWITCHYARD_DB_SCHEMA: t.schema!, SWITCHYARD_CONFIG: join(dir, 'catalog.yaml'), SWITCHYARD_ADMIN_KEY: ADMIN, SWITCHYARD_DATA_DIR: join(dir, 'data') };
  });
  afterAll(async () => {
    for (const p of started) p.proc.kill('SIGKILL');
    await t?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('three instances on one account while the balance runs dry: exactly what it pays for is served, journal = balances, nothing left reserved after SIGTERM', async () => {
    const gateways = await Promise.all([start(), start(), start()]);
    const H = holdOf(small);
    const K = 150;
    const account = await t.ledger.createAccount('dry', BigInt(K) * H + H - 1n);
    const keys = await Promise.all(Array.from({ length: 5 }, () => t.ledger.createKey(account.id)));
    // 400 requests over the three instances, 30 at a time: leases are taken while the balance lasts.
    const statuses = await pool(400, 30, async (i) => {
      const res = await send(gateways[i % 3].url, keys[i % keys.length].key, small);
      const json = (await res.json()) as any;
      if (res.status === 402) expect(json.error.type).toBe('insufficient_quota');
      if (res.status === 200) expect(json.usage.completion_tokens).toBe(8);
      return res.status;
    });
    // Refused only when nobody could pay: every request the balance covers is served.
    expect(statuses.filter((s) => s === 200).length).toBe(K);
    expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([]);
    const usage = await t.ledger.db.selectFrom('usage_records').select(['lease_id', 'cost']).where('account_id', '=', account.id).execute();
    expect(usage.length).toBe(K);
    const leased = usage.filter((u) => u.lease_id !== null).length;
    console.log(`three instances: ${K} served (${leased} from leases, ${K - leased} with exact holds), ${400 - K} refused; ${(await leaseRows(account.id)).length} leases taken`);
    expect(leased).toBeGreaterThan(K / 2);
    await Promise.all(gateways.map(stop));
    expect((await leaseRows(account.id)).filter((l) => l.status === 'active')).toEqual([]);
    const pending = await t.ledger.db.selectFrom('holds').select('id').where('account_id', '=', account.id).where('status', '=', 'pending').execute();
    expect(pending).toEqual([]);
    expect(await t.ledger.getAccount(account.id)).toMatchObject({ balance: H - 1n, held: 0n });
    const captures = (await t.ledger.ledgerEntries(account.id, 1000)).filter((e) => e.kind === 'capture');
    expect(captures.reduce((sum, e) => sum - e.amount, 0n)).toBe(BigInt(K) * H);
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('two instances, one holding a lease on a small balance: the other\'s request that needs it is served once the lease comes back', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const H = holdOf(small);
    const big = { ...small, max_tokens: 2_000 };
    const B = holdOf(big);
    // After A's first request and its lease of 20 holds, less than B's hold is left outside the lease.
    const balance = B + 10n * H;
    expect(balance - H).toBeGreaterThanOrEqual(40n * H); // enough for A to take its lease
    const account = await t.ledger.createAccount('shared', balance);
    const { key } = await t.ledger.createKey(account.id);
    // A's first request (a few, on a loaded machine that had its listening connection reconnecting) brings its lease.
    let lease: Awaited<ReturnType<typeof leaseRows>>[number] | undefined;
    for (let i = 0; i < 5 && !lease; i++) {
      expect((await send(a.url, key, small)).status).toBe(200);
      lease = await waitFor(async () => (await leaseRows(account.id)).find((l) => l.status === 'active') ?? null, 3_000, "A's lease").then((l) => l ?? undefined, () => undefined);
    }
    expect(lease!.amount).toBe(20n * H);
    const account0 = (await t.ledger.db.selectFrom('accounts').select(['balance', 'held']).where('id', '=', account.id).executeTakeFirstOrThrow());
    expect(account0.balance - account0.held).toBeLessThan(B);
    const res = await send(b.url, key, big);
    expect(res.status).toBe(200);
    expect((await leaseRows(account.id)).find((l) => l.id === lease!.id)!.amount).toBe(0n);
    await Promise.all([stop(a), stop(b)]);
    expect(await t.ledger.getAccount(account.id)).toMatchObject({ held: 0n });
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a key revoked through one instance is refused at once by another that serves its account from a lease', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const account = await t.ledger.createAccount('revoked', 1_000_000_000n);
    const { key, record } = await t.ledger.createKey(account.id);
    const other = await t.ledger.createKey(account.id);
    for (let i = 0; i < 5; i++) expect((await send(b.url, key, small)).status).toBe(200);
    await waitFor(async () => (await leaseRows(account.id)).find((l) => l.status === 'active'), 10_000, "B's lease");
    const served = await send(b.url, key, small);
    expect(served.status).toBe(200);
    const requestId = served.headers.get('x-request-id')!;
    const row = await waitFor(() => t.ledger.db.selectFrom('usage_records').select('lease_id').where('request_id', '=', requestId).executeTakeFirst(), 5_000, 'the usage record');
    expect(row.lease_id).not.toBeNull();
    const revoked = await fetch(`${a.url}/admin/keys/${record.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(revoked.status).toBe(200);
    expect(await refusedWithin(b.url, key)).toBeLessThan(100);
    // The account's other key is still served.
    expect((await send(b.url, other.key, small)).status).toBe(200);
    // An operator's SQL is announced by the database itself.
    await t.ledger.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', other.record.id).execute();
    expect(await refusedWithin(b.url, other.key)).toBeLessThan(100);
    await Promise.all([stop(a), stop(b)]);
  });

  it('kill -9: the lease of the killed instance is given back at its expiry by another instance, which reports what it was running', async () => {
    const reaper = await start({ SWITCHYARD_REAPER_INTERVAL_MS: '200' });
    const victim = await start({ SWITCHYARD_LEASE_TTL_MS: '1500', SWITCHYARD_REAPER_INTERVAL_MS: '600000' });
    const account = await t.ledger.createAccount('victim', 1_000_000_000n);
    const { key } = await t.ledger.createKey(account.id);
    let answered = 0;
    const answeredAt: number[] = [];
    let stopping = false;
    const load = pool(5, 5, async () => {
      while (!stopping) {
        const res = await fetch(`${victim.url}/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(small),
        }).catch(() => undefined);
        if (!res) return;
        if (res.status === 200) {
          answered++;
          answeredAt.push(performance.now());
        }
        await res.arrayBuffer().catch(() => undefined);
      }
    });
    const lease = await waitFor(async () => (await leaseRows(account.id)).find((l) => l.status === 'active'), 10_000, "the victim's lease");
    await new Promise((r) => setTimeout(r, 300));
    const killedAt = performance.now();
    victim.proc.kill('SIGKILL');
    stopping = true;
    await load;
    await victim.exited;
    const expired = await waitFor(async () => {
      const l = (await leaseRows(account.id)).find((r) => r.id === lease.id)!;
      return l.status === 'active' ? undefined : l;
    }, 10_000, 'the lease to expire');
    expect(expired.status).toBe('expired');
    const report = await waitFor(async () => reaper.logs().find((l) => l.leaseId === lease.id), 5_000, 'the reaper to report the lease');
    expect(report).toMatchObject({ level: 40, inFlight: expect.any(Number) });
    expect(await t.ledger.getAccount(account.id)).toMatchObject({ held: 0n });
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
    // Unbilled: at most the requests in flight at the kill (5) and those that ended while the last
    // batch lingered or was being written: a lease admits nothing once a batch is 250 ms unanswered,
    // so those are among the answers of the last 300 ms before the kill.
    const billed = (await t.ledger.db.selectFrom('usage_records').select('request_id').where('account_id', '=', account.id).execute()).length;
    const lastBatch = answeredAt.filter((at) => at > killedAt - 300).length;
    console.log(`kill -9: ${answered} answered, ${billed} billed, ${lastBatch} answered in the last 300 ms; the reaper reported ${report.inFlight} in flight on the lease`);
    expect(billed).toBeLessThanOrEqual(answered + 5);
    expect(answered - billed).toBeLessThanOrEqual(lastBatch);
    await stop(reaper);
  });
});
