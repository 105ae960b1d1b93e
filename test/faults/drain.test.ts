/**
 * SIGTERM with requests in flight, on real `switchyard serve` processes (PGlite, and PostgreSQL
 * when TEST_DATABASE_URL is set): the listener closes at once, requests that finish within the
 * drain period finish normally, the rest end like an upstream failure (an in-stream error event
 * for streams, a 503 for a non-streamed call), and before the process exits every request has
 * exactly one usage record and no hold is left pending.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { EMBEDDED_DATABASES, openLedger } from '../../src/ledger/index.js';
import type { EmbeddedDatabase } from '../../src/ledger/data-dir.js';
import { pgTarget, type OpenedTarget } from '../ledger/db-targets.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';

const ADMIN = 'sk-admin-drain';
const DRAIN_MS = 2_000;
const CATALOG = `
providers:
  local: { type: local }
models:
  - id: local-slow
    provider: local
    upstream_model: local-opus
    price: { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 }
    max_output_tokens: 32000
    tokens_per_second: 4
    pace_whole_answers: true
`;

interface Outcome {
  kind: string;
  status: number;
  text: string;
}

async function call(url: string, key: string, kind: 'chat-stream' | 'messages-stream' | 'chat' | 'short-stream', onFirstByte: () => void): Promise<Outcome> {
  const maxTokens = kind === 'short-stream' ? 4 : 2000;
  const stream = kind !== 'chat';
  const messages = kind === 'messages-stream';
  // A non-streamed call has no first byte before its end: it counts as started once sent.
  if (!stream) onFirstByte();
  const res = await fetch(`${url}${messages ? '/v1/messages' : '/v1/chat/completions'}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(messages ? { 'anthropic-version': '2023-06-01' } : {}) },
    body: JSON.stringify({ model: 'local-slow', stream, max_tokens: maxTokens, messages: [{ role: 'user', content: 'Tell me a long story.' }] }),
  });
  let text = '';
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) break;
    if (!text && stream) onFirstByte();
    text += decoder.decode(value, { stream: true });
  }
  return { kind, status: res.status, text };
}

interface Db {
  env: Record<string, string>;
  /** Opens the ledger the process used (after it exited, for PGlite). */
  open(): Promise<{ ledger: Awaited<ReturnType<typeof openLedger>>; close(): Promise<void> }>;
  cleanup(): Promise<void>;
}

function embeddedDb(embedded: EmbeddedDatabase): Db {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-drain-'));
  return {
    env: { SWITCHYARD_DATA_DIR: join(dir, 'data'), SWITCHYARD_EMBEDDED_DB: embedded },
    async open() {
      const ledger = await openLedger({ dataDir: join(dir, 'data'), embedded });
      return { ledger, close: () => ledger.close() };
    },
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresDb(): Promise<Db> {
  const t: OpenedTarget = await pgTarget!.open();
  return {
    env: { DATABASE_URL: t.databaseUrl!, SWITCHYARD_DB_SCHEMA: t.schema! },
    async open() {
      return { ledger: t.ledger, close: async () => undefined };
    },
    cleanup: () => t.cleanup(),
  };
}

const targets: Array<[string, () => Promise<Db>]> = EMBEDDED_DATABASES.map((kind) => [kind, async () => embeddedDb(kind)]);
if (pgTarget) targets.push(['postgres', postgresDb]);

describe.each(targets)('SIGTERM with requests in flight (%s)', (_name, makeDb) => {
  let db: Db | undefined;
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    gw?.proc.kill('SIGKILL');
    await db?.cleanup();
  });

  it('finishes what fits in the drain, ends the rest with an error in its protocol, bills all, leaves no hold pending', async () => {
    db = await makeDb();
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-drain-config-'));
    writeFileSync(join(dir, 'catalog.yaml'), CATALOG);
    gw = await startGatewayProcess({ ...db.env, SWITCHYARD_CONFIG: join(dir, 'catalog.yaml'), SWITCHYARD_ADMIN_KEY: ADMIN, SWITCHYARD_DRAIN_MS: String(DRAIN_MS) });
    const adminPost = async (path: string, body: unknown) =>
      (await (await fetch(`${gw!.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
    const account = await adminPost('/admin/accounts', { name: 'drain', balance: 10_000_000_000 });
    const { key } = await adminPost('/admin/keys', { account_id: account.id });

    // Each long one writes for more than 10 s at 4 tokens/s; a short stream of 4 tokens fits in the drain period.
    const kinds = ['chat-stream', 'chat-stream', 'chat-stream', 'messages-stream', 'messages-stream', 'chat', 'chat', 'short-stream'] as const;
    let started = 0;
    const all = kinds.length;
    let allStarted!: () => void;
    const ready = new Promise<void>((r) => (allStarted = r));
    const onFirst = () => void (++started === all && allStarted());
    const long = kinds.map((k) => call(gw!.url, key, k, onFirst));
    await ready;
    // Let the non-streamed calls reach their upstream (they have no first byte to wait for).
    await new Promise((r) => setTimeout(r, 300));
    gw.proc.kill('SIGTERM');
    // Started right after the signal: it finishes within the drain period.
    await new Promise((r) => setTimeout(r, 100));
    const refused = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(
      (r) => `answered ${r.status}`,
      (e) => `refused (${e.cause?.code ?? e.message})`,
    );
    const outcomes = await Promise.all(long);
    const code = await gw.exited;

    const { ledger, close } = await db.open();
    try {
      // Portable SQL (PostgreSQL, PGlite, SQLite); counts come back as numbers or bigints.
      const holds = await sql<{ status: string; n: number | bigint }>`SELECT status, count(*) AS n FROM holds GROUP BY status`.execute(ledger.db);
      const usage = await sql<{ status: string; n: number | bigint; cost: string }>`SELECT status, count(*) AS n, CAST(sum(cost) AS TEXT) AS cost FROM usage_records GROUP BY status`.execute(ledger.db);
      const pending = Number(holds.rows.find((r) => r.status === 'pending')?.n ?? 0);
      const billed = usage.rows.reduce((n, r) => n + Number(r.n), 0);
      console.log(
        `SIGTERM with ${all} requests in flight: exit ${code}; a new connection ${refused}; statuses ${outcomes.map((o) => `${o.kind}=${o.status}`).join(' ')};` +
          ` usage records ${billed} (${usage.rows.map((r) => `${r.status}: ${r.n}, ${r.cost} nd`).join('; ')}); holds ${holds.rows.map((r) => `${r.status}: ${r.n}`).join(', ')}`,
      );
        expect(code).toBe(0);
      expect(pending).toBe(0);
      expect(billed).toBe(all);
      expect((await ledger.balanceCheck()).problems).toEqual([]);
    } finally {
      await close();
    }
    expect(refused).toMatch(/^refused/);
    for (const o of outcomes) {
      if (o.kind === 'short-stream') {
        expect(o.status).toBe(200);
        expect(o.text).toMatch(/"finish_reason":"length"[\s\S]*data: \[DONE\]\n\n$/);
        expect(o.text).not.toContain('shutting down');
        continue;
      }
      if (o.kind === 'chat') {
        expect(o.status).toBe(503);
        expect(JSON.parse(o.text).error.message).toContain('shutting down');
        continue;
      }
      expect(o.status).toBe(200);
      // Some content, then the error event in the protocol's own shape.
      if (o.kind === 'chat-stream') {
        expect(o.text).toMatch(/"content":/);
        expect(o.text).toMatch(/data: \{"error":\{"message":"the gateway is shutting down[^\n]*\n\ndata: \[DONE\]\n\n$/);
      } else {
        expect(o.text).toContain('event: content_block_delta');
        expect(o.text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"[a-z_]+","message":"the gateway is shutting down/);
      }
    }
    const logged = gw.logs().map((l) => l.msg);
    expect(logged).toEqual(expect.arrayContaining(['draining', 'drain deadline: ending the requests still in flight', 'stopped']));
    rmSync(dir, { recursive: true, force: true });
  }, 90_000);
});
