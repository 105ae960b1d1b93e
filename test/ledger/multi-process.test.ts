import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgTarget, type OpenedTarget } from './db-targets.js';

const WORKER = fileURLToPath(new URL('./hold-worker.ts', import.meta.url));

interface WorkerResult { ok: number; insufficient: number; other: string[] }

interface Worker { ready: Promise<void>; done: Promise<WorkerResult>; go(): void }

/** Starts a worker; `ready` resolves once it has connected, `go()` releases it. */
function startWorker(env: Record<string, string>): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => (markReady = r));
  const done = new Promise<WorkerResult>((resolve, reject) => {
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) markReady();
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`worker exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as WorkerResult);
    });
  });
  return { ready: Promise.race([ready, done.then(() => undefined)]), done, go: () => child.stdin.end('go\n') };
}

// PostgreSQL only: PGlite is one process's embedded database. Never skipped on CI (see db-targets).
describe.runIf(pgTarget)('ledger across 3 processes on postgres', () => {
  let t: OpenedTarget;
  beforeAll(async () => {
    t = await pgTarget!.open();
  });
  afterAll(() => t?.cleanup());

  it('3 processes placing holds at once on one account: exactly K succeed overall', async () => {
    const K = 53;
    const amount = 999n;
    const account = await t.ledger.createAccount('multi', amount * BigInt(K) + 500n);
    const workers = ['p1', 'p2', 'p3'].map((tag) =>
      startWorker({
        LEDGER_URL: t.databaseUrl!, LEDGER_SCHEMA: t.schema!, ACCOUNT: account.id,
        HOLDS: '100', AMOUNT: amount.toString(), TAG: `${account.id}-${tag}`,
      }),
    );
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.go();
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.other).toEqual([]);
    expect(results.reduce((n, r) => n + r.ok, 0)).toBe(K);
    expect(results.reduce((n, r) => n + r.insufficient, 0)).toBe(300 - K);
    // Holds really interleaved: more than one process won some.
    expect(results.filter((r) => r.ok > 0).length).toBeGreaterThan(1);
    expect(await t.ledger.getAccount(account.id)).toMatchObject({ held: amount * BigInt(K), available: 500n });
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  }, 60_000);
});
