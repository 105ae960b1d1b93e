/**
 * Database faults through the real server: on PostgreSQL behind a TCP proxy that can refuse or
 * blackhole the database, on SQLite with its write lock held by another process: the process never dies of them, clients get a 503 in their protocol's
 * shape with retry-after while the database is away, and service resumes by itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openLedger } from '../../src/ledger/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, postgres } from '../ledger/db-targets.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';


describe.skipIf(!PG_URL)('database faults (PostgreSQL behind a proxy)', () => {
  let proxy: TcpProxy;
  let gw: TestGateway;
  beforeAll(async () => {
    const target = new URL(PG_URL!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    // The default timeouts: what an operator who sets nothing gets. Every hold goes to the database
    // here (what these cases measure); a balance lease under an outage: lease-faults.test.ts.
    const db = postgres(PG_URL!, { connectUrl: proxy.url(PG_URL!) });
    gw = await startTestGateway({ target: db, exactHolds: true });
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
    console.log(`blackholed database: answered ${status} after ${waited} ms`);
    expect(status).toBe(503);
    // Bounded by the timeouts, not by the outage or the kernel's TCP timeout.
    expect(waited).toBeLessThan(2_000);
    expect(await until200(chat)).toBe(200);
  });

  it('with default settings, a blackholed database gets every request a 503 within about a second, none longer than 2 s', async () => {
    // A key never used yet: its lookup needs the database too.
    const fresh = await gw.newAccount();
    expect((await chat()).status).toBe(200);
    proxy.setMode('blackhole');
    const timed = async (name: string, call: () => Promise<Response>) => {
      const started = Date.now();
      const res = await call();
      const body = await res.text();
      return { name, status: res.status, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started, body };
    };
    let answers: Array<Awaited<ReturnType<typeof timed>>>;
    let ready: Awaited<ReturnType<typeof timed>>;
    try {
      [ready, ...answers] = await Promise.all([
        timed('readyz', () => fetch(`${gw.url}/readyz`)),
        ...Array.from({ length: 6 }, (_, i) => timed(`chat ${i}`, chat)),
        ...Array.from({ length: 3 }, (_, i) => timed(`messages ${i}`, messages)),
        timed('fresh key', () =>
          fetch(`${gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${fresh.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'local-haiku', messages: [{ role: 'user', content: 'Hello' }] }),
          }),
        ),
      ]);
      // Requests that arrive while the first ones still wait are bounded too.
      answers.push(...(await Promise.all([timed('chat later', chat), timed('messages later', messages)])));
    } finally {
      proxy.setMode('pass');
    }
    console.log(`blackholed, defaults: readyz ${ready.status} in ${ready.ms} ms; ${answers.map((a) => `${a.name} ${a.status} ${a.ms} ms`).join(', ')}`);
    expect(ready.status).toBe(503);
    expect(ready.ms).toBeLessThan(1_500);
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(a.retryAfter).toMatch(/^\d+$/);
      expect(a.ms).toBeLessThan(2_000);
      expect(a.body).toContain('temporarily unavailable');
    }
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(2_000);
    expect(await until200(chat)).toBe(200);
    // No hold is left pending by the requests that were refused.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await gw.ledger.getAccount(gw.accountId)).toMatchObject({ held: 0n });
    expect(await gw.ledger.getAccount(fresh.accountId)).toMatchObject({ held: 0n });
  });
});

/**
 * SQLite's version of a database that is away: another process (a backup, the sqlite3 shell)
 * holds the file's write lock. Requests that need to write get a 503 with retry-after within about
 * a second, and service resumes once the lock is let go. (PGlite runs inside the gateway's process
 * on a directory locked to it: nothing else can take it away.)
 */
describe('database faults (SQLite locked by another process)', () => {
  let dir: string;
  let gw: TestGateway;
  let other: { exec(sql: string): void; close(): void };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-busy-'));
    const file = join(dir, 'ledger.sqlite');
    // Every hold goes to the database here (a balance lease under an outage: lease-faults.test.ts).
    const ledger = await openLedger({ databaseUrl: `sqlite:${file}`, leases: false });
    gw = await startTestGateway({ target: { name: 'sqlite', open: async () => ({ ledger, cleanup: () => ledger.close() }) } });
    other = new (createRequire(import.meta.url)('libsql'))(file);
  });
  afterAll(async () => {
    other?.close();
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with retry-after within about a second while the write lock is held, then resumes', async () => {
    expect((await fetch(`${gw.url}/v1/chat/completions`, chatInit(gw.key))).status).toBe(200);
    await gw.ledger.settled();
    other.exec('BEGIN IMMEDIATE');
    const answers: Array<{ status: number; retryAfter: string | null; ms: number }> = [];
    try {
      for (const init of [chatInit(gw.key), messagesInit(gw.key)]) {
        const started = Date.now();
        const path = JSON.parse(String(init.body)).max_tokens ? '/v1/messages' : '/v1/chat/completions';
        const res = await fetch(`${gw.url}${path}`, init);
        await res.text();
        answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started });
      }
    } finally {
      other.exec('ROLLBACK');
    }
    console.log(`SQLite write-locked: ${answers.map((a) => `${a.status} in ${a.ms} ms`).join(', ')}`);
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(a.retryAfter).toMatch(/^\d+$/);
      expect(a.ms).toBeLessThan(2_000);
    }
    expect((await fetch(`${gw.url}/v1/chat/completions`, chatInit(gw.key))).status).toBe(200);
    expect(await gw.ledger.getAccount(gw.accountId)).toMatchObject({ held: 0n });
  });
});

function chatInit(key: string): RequestInit {
  return {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-haiku', messages: [{ role: 'user', content: 'Hello' }] }),
  };
}

function messagesInit(key: string): RequestInit {
  return {
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-haiku', max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] }),
  };
}
