/**
 * Settlement through database outages, on PostgreSQL behind a proxy that can refuse it: a request
 * answered while the database is away is billed once it returns (settle failing, then succeeding),
 * also when the outage outlasted its hold (late capture after another instance's reaper expired it),
 * and a settle still unwritten when the process stops is spooled and applied by the next start.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { PG_URL } from '../ledger/db-targets.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const until = async (check: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe.skipIf(!PG_URL)('settlement through database outages (PostgreSQL)', () => {
  let proxy: TcpProxy;
  let dir: string;
  const schema = `faults_settle_${process.pid}_${Date.now()}`;
  /** The same schema reached directly: what another instance (and the test's checks) see. */
  let direct: Ledger;
  const opened: Ledger[] = [];
  const gateways: TestGateway[] = [];

  beforeAll(async () => {
    const target = new URL(PG_URL!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    dir = mkdtempSync(join(tmpdir(), 'switchyard-spool-'));
    direct = await openLedger({ databaseUrl: PG_URL, schema });
  });
  afterAll(async () => {
    proxy?.setMode('pass');
    for (const g of gateways) await g.gateway.close();
    for (const l of opened) await l.close().catch(() => undefined);
    await direct?.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A gateway on its own ledger through the proxy, with a short statement timeout. */
  async function gatewayThroughProxy(holdTtlMs = 60_000): Promise<{ gw: TestGateway; ledger: Ledger }> {
    const ledger = await openLedger({ databaseUrl: proxy.url(PG_URL!), schema, statementTimeoutMs: 1_000, connectTimeoutMs: 1_000, spoolPath: join(dir, 'unsettled-settles.jsonl') });
    opened.push(ledger);
    const gw = await startTestGateway({ target: { name: 'postgres', open: async () => ({ ledger, cleanup: async () => undefined }) }, localRate: 40, holdTtlMs, reaperIntervalMs: 3_600_000 });
    gateways.push(gw);
    return { gw, ledger };
  }

  /** Streams a chat completion; the database goes away after the first bytes; resolves with the whole text. */
  async function streamThroughOutage(gw: TestGateway): Promise<{ requestId: string; text: string }> {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-haiku', stream: true, max_tokens: 40, messages: [{ role: 'user', content: 'Tell me a story.' }] }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!text) proxy.setMode('refuse');
      text += new TextDecoder().decode(value);
    }
    return { requestId: res.headers.get('x-request-id')!, text };
  }

  const holdOf = async (id: string) => (await sql<{ status: string; captured: string }>`SELECT status, captured::text FROM holds WHERE id = ${id}`.execute(direct.db)).rows[0];
  const usageOf = async (id: string) => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM usage_records WHERE request_id = ${id}`.execute(direct.db)).rows[0].n;

  it('a settle that fails while the database is away is retried and written once it returns', async () => {
    const { gw, ledger } = await gatewayThroughProxy();
    try {
      const { requestId, text } = await streamThroughOutage(gw);
      expect(text).toContain('data: [DONE]');
      await until(() => ledger.unsettledCount === 1);
      expect((await holdOf(requestId)).status).toBe('pending');
    } finally {
      proxy.setMode('pass');
    }
    await until(() => ledger.unsettledCount === 0);
    const { rows } = await sql<{ requestId: string }>`SELECT request_id AS "requestId" FROM usage_records WHERE account_id = ${gw.accountId}`.execute(direct.db);
    const requestId = rows[0]?.requestId;
    const hold = await holdOf(requestId);
    console.log(`settle through an outage: answered 1, billed ${rows.length}, hold ${hold.status}, captured ${hold.captured} nd`);
    expect(rows.length).toBe(1);
    expect(hold.status).toBe('settled');
    expect(BigInt(hold.captured)).toBeGreaterThan(0n);
    expect(await direct.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('an outage longer than the hold TTL: another instance expires the hold, the late settle still captures', async () => {
    const { gw, ledger } = await gatewayThroughProxy(1_000);
    let requestId = '';
    try {
      ({ requestId } = await streamThroughOutage(gw));
      await until(() => ledger.unsettledCount === 1);
      // Another instance's reaper, which still reaches the database, expires the hold.
      await until(async () => (await direct.reapExpired()) > 0 || (await holdOf(requestId)).status === 'expired');
      expect((await holdOf(requestId)).status).toBe('expired');
    } finally {
      proxy.setMode('pass');
    }
    await until(() => ledger.unsettledCount === 0);
    const hold = await holdOf(requestId);
    const journal = (await direct.ledgerEntries(gw.accountId)).filter((e) => e.requestId === requestId);
    console.log(`outage past the hold TTL: hold ${hold.status}, captured ${hold.captured} nd, journal "${journal[0]?.reason}", pending ${(await direct.getAccount(gw.accountId))!.held} nd held`);
    expect(hold.status).toBe('settled');
    expect(BigInt(hold.captured)).toBeGreaterThan(0n);
    expect(journal[0].reason).toBe('captured after its hold expired');
    expect(await usageOf(requestId)).toBe(1);
    expect(await direct.getAccount(gw.accountId)).toMatchObject({ held: 0n });
    expect(await direct.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a settle still unwritten at shutdown is spooled and applied by the next start', async () => {
    const { gw, ledger } = await gatewayThroughProxy();
    let requestId = '';
    try {
      ({ requestId } = await streamThroughOutage(gw));
      await until(() => ledger.unsettledCount === 1);
      await gw.gateway.close();
      await ledger.close(200);
      opened.splice(opened.indexOf(ledger), 1);
    } finally {
      proxy.setMode('pass');
    }
    const spooled = readFileSync(join(dir, 'unsettled-settles.jsonl'), 'utf8').trim().split('\n');
    expect(spooled.length).toBe(1);
    expect(JSON.parse(spooled[0]).requestId).toBe(requestId);
    expect((await holdOf(requestId)).status).toBe('pending');
    expect(await usageOf(requestId)).toBe(0);

    // The next start applies it.
    const next = await openLedger({ databaseUrl: proxy.url(PG_URL!), schema, spoolPath: join(dir, 'unsettled-settles.jsonl') });
    opened.push(next);
    const hold = await holdOf(requestId);
    console.log(`restart with 1 spooled settle: hold ${hold.status}, captured ${hold.captured} nd, usage records ${await usageOf(requestId)}`);
    expect(hold.status).toBe('settled');
    expect(await usageOf(requestId)).toBe(1);
    expect(() => readFileSync(join(dir, 'unsettled-settles.jsonl'))).toThrow();
    expect(await direct.balanceCheck()).toEqual({ ok: true, problems: [] });
  });
});
