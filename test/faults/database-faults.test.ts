/**
 * Database faults through the real server on PostgreSQL, behind a TCP proxy that can refuse or
 * blackhole the database: the process never dies of them, clients get a 503 in their protocol's
 * shape with retry-after while the database is away, and service resumes by itself.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, postgres } from '../ledger/db-targets.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const STATEMENT_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 1_000;

describe.skipIf(!PG_URL)('database faults (PostgreSQL behind a proxy)', () => {
  let proxy: TcpProxy;
  let gw: TestGateway;
  beforeAll(async () => {
    const target = new URL(PG_URL!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const db = postgres(PG_URL!, { connectUrl: proxy.url(PG_URL!), statementTimeoutMs: STATEMENT_TIMEOUT_MS, connectTimeoutMs: CONNECT_TIMEOUT_MS });
    gw = await startTestGateway({ target: db });
  });
  afterAll(async () => {
    proxy?.setMode('pass');
    await gw?.close();
    await proxy?.close();
  });

  const chat = () =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-haiku', messages: [{ role: 'user', content: 'Hello' }] }),
    });
  const messages = () =>
    fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-haiku', max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] }),
    });

  /** Polls until `ok` answers 200 (the database is back and the pool has reconnected). */
  async function until200(call: () => Promise<Response>, timeoutMs = 15_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call()).status;
      if (status === 200) return status;
      await new Promise((r) => setTimeout(r, 200));
    }
    return status;
  }

  it('survives pg_terminate_backend on its connections and keeps answering', async () => {
    expect((await chat()).status).toBe(200);
    const ports = proxy.upstreamPorts();
    expect(ports.length).toBeGreaterThan(0);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query('SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ANY($1::int[])) t', [ports]);
      console.log(`terminated ${rows[0].n} gateway backends`);
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    // The idle connections' 'error' events fire now; an unhandled one would end this process.
    await new Promise((r) => setTimeout(r, 300));
    expect(await until200(chat)).toBe(200);
    expect((await gw.ledger.balanceCheck()).problems).toEqual([]);
  });

  it('answers 503 with retry-after in the caller\'s shape while the database refuses, then resumes', async () => {
    proxy.setMode('refuse');
    try {
      const openai = await chat();
      const openaiBody: any = await openai.json();
      console.log('database down: chat', openai.status, JSON.stringify(openaiBody));
      expect(openai.status).toBe(503);
      expect(openai.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(openaiBody.error).toMatchObject({ type: expect.any(String), message: expect.stringContaining('temporarily unavailable') });
      expect(JSON.stringify(openaiBody)).not.toMatch(/ECONN|127\.0\.0\.1|terminated/);

      const anthropic = await messages();
      const anthropicBody: any = await anthropic.json();
      expect(anthropic.status).toBe(503);
      expect(anthropic.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(anthropicBody).toMatchObject({ type: 'error', error: { type: expect.any(String) } });

      const ready = await fetch(`${gw.url}/readyz`);
      const readyBody: any = await ready.json();
      expect(ready.status).toBe(503);
      expect(readyBody.checks.database).toMatch(/^unreachable/);
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);

      const admin = await gw.admin(`/admin/accounts/${gw.accountId}`);
      expect(admin.status).toBe(503);
      expect(admin.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      proxy.setMode('pass');
    }
    expect(await until200(chat)).toBe(200);
    expect((await gw.admin(`/admin/accounts/${gw.accountId}`)).status).toBe(200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });

  it('does not wait out a blackholed database: the statement timeout answers 503, then service resumes', async () => {
    expect((await chat()).status).toBe(200);
    proxy.setMode('blackhole');
    let status = 0;
    const started = Date.now();
    try {
      const res = await chat();
      status = res.status;
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      proxy.setMode('pass');
    }
    const waited = Date.now() - started;
    console.log(`blackholed database: answered ${status} after ${waited} ms (statement timeout ${STATEMENT_TIMEOUT_MS} ms)`);
    expect(status).toBe(503);
    // Bounded by the timeouts (a few seconds), not by the outage or the kernel's TCP timeout.
    expect(waited).toBeLessThan(20_000);
    expect(await until200(chat)).toBe(200);
  });
});
