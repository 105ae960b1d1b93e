/**
 * SIGTERM during a database outage, on real `switchyard serve` processes: streams answered while
 * the database is away have settles the process cannot write; the drain spools them; a restart
 * applies each exactly once (one usage record, the hold settled) and removes the spool. On
 * PostgreSQL the outage is a proxy that refuses; on SQLite, another process holding the write
 * lock. (PGlite runs inside the gateway on a directory locked to it: it cannot be away.)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { PG_URL } from '../ledger/db-targets.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const ADMIN = 'sk-admin-restart-0123456789';
const CATALOG = `
providers:
  local: { type: local }
models:
  - id: local-paced
    provider: local
    upstream_model: local-haiku
    price: { input: 1, output: 5 }
    tokens_per_second: 40
`;

interface Outage {
  env: Record<string, string>;
  down(): void;
  up(): void;
  /** The ledger the processes used, opened directly once they are gone. */
  open(): Promise<Ledger>;
  cleanup(): Promise<void>;
}

function sqliteOutage(dir: string): Outage {
  const file = join(dir, 'data', 'ledger.sqlite');
  let other: { exec(sql: string): void; close(): void } | undefined;
  return {
    env: { SWITCHYARD_EMBEDDED_DB: 'sqlite' },
    down() {
      other = new (createRequire(import.meta.url)('libsql'))(file);
      other!.exec('BEGIN IMMEDIATE');
    },
    up() {
      other?.exec('ROLLBACK');
      other?.close();
      other = undefined;
    },
    open: () => openLedger({ databaseUrl: `sqlite:${file}` }),
    cleanup: async () => undefined,
  };
}

async function postgresOutage(): Promise<Outage> {
  const target = new URL(PG_URL!);
  const proxy: TcpProxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const schema = `faults_restart_${process.pid}_${Date.now()}`;
  return {
    env: { DATABASE_URL: proxy.url(PG_URL!), SWITCHYARD_DB_SCHEMA: schema },
    down: () => proxy.setMode('refuse'),
    up: () => proxy.setMode('pass'),
    open: () => openLedger({ databaseUrl: PG_URL, schema }),
    async cleanup() {
      const ledger = await openLedger({ databaseUrl: PG_URL, schema });
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(ledger.db);
      await ledger.close();
      await proxy.close();
    },
  };
}

const targets: Array<[string, (dir: string) => Promise<Outage>]> = [['sqlite', async (dir) => sqliteOutage(dir)]];
if (PG_URL) targets.push(['postgres', () => postgresOutage()]);

for (const [name, makeOutage] of targets) {
  describe(`SIGTERM during a database outage, then a restart (${name})`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-restart-'));
    let outage: Outage | undefined;
    const procs: GatewayProcess[] = [];
    afterAll(async () => {
      outage?.up();
      for (const p of procs) p.proc.kill('SIGKILL');
      await outage?.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    it('spools the settles it could not write and the next start applies each once', async () => {
      outage = await makeOutage(dir);
      writeFileSync(join(dir, 'catalog.yaml'), CATALOG);
      const env = { ...outage.env, SWITCHYARD_DATA_DIR: join(dir, 'data'), SWITCHYARD_CONFIG: join(dir, 'catalog.yaml'), SWITCHYARD_ADMIN_KEY: ADMIN, SWITCHYARD_DRAIN_MS: '2000' };
      const first = await startGatewayProcess(env);
      procs.push(first);
      const admin = async (path: string, body: unknown) =>
        (await (await fetch(`${first.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
      const account = await admin('/admin/accounts', { name: 'restart', balance: 1_000_000_000 });
      const { key } = await admin('/admin/keys', { account_id: account.id });

      // Three streams; the database goes away once each has started.
      let started = 0;
      const streams = Array.from({ length: 3 }, async () => {
        const res = await fetch(`${first.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'local-paced', stream: true, max_tokens: 30, messages: [{ role: 'user', content: 'Tell me a story.' }] }),
        });
        const reader = res.body!.getReader();
        let text = '';
        for (let step = 0; ; step++) {
          const { done, value } = await reader.read();
          if (step === 0 && ++started === 3) outage!.down();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
        return { requestId: res.headers.get('x-request-id')!, text };
      });
      const answered = await Promise.all(streams);
      for (const a of answered) expect(a.text).toContain('data: [DONE]');
      const ids = answered.map((a) => a.requestId);
      const failing = () => new Set(first.logs().filter((l) => l.msg === 'settle failed; trying again').map((l) => l.requestId));
      for (let i = 0; i < 100 && ids.some((id) => !failing().has(id)); i++) await new Promise((r) => setTimeout(r, 100));
      expect([...failing()].sort()).toEqual([...ids].sort());

      first.proc.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const spoolFile = join(dir, 'data', 'unsettled-settles.jsonl');
      const spooled = readFileSync(spoolFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l).requestId);
      expect(spooled.sort()).toEqual([...ids].sort());

      outage.up();
      const second = await startGatewayProcess(env);
      procs.push(second);
      const applied = second.logs().find((l) => l.msg === 'applied the spooled settles');
      second.proc.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      const ledger = await outage.open();
      try {
        const holds = await sql<{ id: string; status: string }>`SELECT id, status FROM holds WHERE id IN (${sql.join(ids)})`.execute(ledger.db);
        const usage = await sql<{ request_id: string }>`SELECT request_id FROM usage_records WHERE request_id IN (${sql.join(ids)})`.execute(ledger.db);
        console.log(`${name}: ${ids.length} answered during the outage, ${spooled.length} spooled at SIGTERM, restart ${JSON.stringify(applied)}; holds ${holds.rows.map((h) => h.status)}, usage records ${usage.rows.length}`);
        expect(applied).toMatchObject({ applied: 3, kept: 0 });
        // A request either had a hold, now settled, or was served from a balance lease (no hold).
        expect(holds.rows.map((h) => h.status).filter((st) => st !== 'settled')).toEqual([]);
        expect(usage.rows.map((u) => u.request_id).sort()).toEqual([...ids].sort());
        expect(existsSync(spoolFile)).toBe(false);
        expect((await ledger.balanceCheck()).problems).toEqual([]);
      } finally {
        await ledger.close();
      }
    }, 120_000);
  });
}
