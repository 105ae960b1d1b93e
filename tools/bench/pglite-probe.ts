/**
 * The embedded ledger alone (spec/DECISIONS.md, "Embedded database"): opens the embedded database
 * PROBE_EMBEDDED (sqlite or pglite, default pglite) in a data directory through openLedger, then reports ready time, RSS idle, and RSS and CPU under 50
 * concurrent callers placing and settling OPS (4,000) holds on one account, with the settings it ran.
 * `node --import tsx tools/bench/pglite-probe.ts` times a first start then a restart in one process;
 * with PROBE_DIR=<a directory a previous run initialised> it measures a restarted process alone
 * (the first start's initdb memory stays in its process). PROBE_LABEL names the run in the output.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const t0 = performance.now();
const { openLedger } = await import('../../src/ledger/index.js');
const tImport = performance.now() - t0;
const embedded = (process.env.PROBE_EMBEDDED ?? 'pglite') as 'sqlite' | 'pglite';
const dir = process.env.PROBE_DIR ?? mkdtempSync(join(tmpdir(), 'pgl-probe-'));
const fresh = !process.env.PROBE_DIR;
const startOnce = async () => {
  const t = performance.now();
  const l = await openLedger({ dataDir: dir, embedded });
  return { l, ms: performance.now() - t };
};
let firstReadyMs = NaN;
if (fresh) {
  const first = await startOnce();
  firstReadyMs = first.ms;
  await first.l.close();
}
const second = await startOnce();
const ledger = second.l;
await new Promise((r) => setTimeout(r, 1500));
globalThis.gc?.();
const idle = rss();
const { sql } = await import('kysely');
const show = async (n: string) => ((await sql.raw(`SHOW ${n}`).execute(ledger.db)).rows[0] as any)[n];
const settings = embedded === 'sqlite' ? {} : Object.fromEntries(await Promise.all(['shared_buffers', 'work_mem', 'wal_buffers', 'fsync', 'synchronous_commit', 'temp_buffers', 'maintenance_work_mem'].map(async (n) => [n, await show(n)])));
const acct = await ledger.createAccount('a', 10n ** 15n);
const keys = await Promise.all(Array.from({ length: 10 }, () => ledger.createKey(acct.id)));
const record = { keyId: null, modelRequested: 'm', modelServed: 'm', attempts: [] as unknown[], latencyMs: 1, status: 'ok' as const };
const charge = { model: 'm', cost: 100n, usage: { input: { noCache: 3, cacheRead: 0, cacheWrite: 0 }, output: { total: 10, reasoning: 0 } } };
let peak = rss();
const sampler = setInterval(() => (peak = Math.max(peak, rss())), 100);
const cpu0 = process.cpuUsage();
const tl = performance.now();
let n = 0, seq = 0;
const N = Number(process.env.OPS ?? 4000);
await Promise.all(Array.from({ length: 50 }, async (_, w) => {
  while (n < N) {
    n++;
    const id = `r-${process.pid}-${w}-${seq++}`;
    const k = keys[seq % 10].record;
    await ledger.placeHold({ requestId: id, accountId: acct.id, keyId: k.id, amount: 1000n, ttlMs: 60000 });
    await ledger.settle({ requestId: id, charges: [charge], record: { ...record, keyId: k.id } });
  }
}));
await ledger.settled();
clearInterval(sampler);
const cpu = process.cpuUsage(cpu0);
const loadMs = performance.now() - tl;
console.log(JSON.stringify({
  embedded, config: process.env.PROBE_LABEL ?? 'current settings', importMs: Math.round(tImport), firstReadyMs: Math.round(firstReadyMs), restartReadyMs: Math.round(second.ms),
  idleRssMb: Math.round(idle), loadPeakRssMb: Math.round(peak), opsPerS: Math.round(N / loadMs * 1000), cpuMsPerOp: +((cpu.user + cpu.system) / 1000 / N).toFixed(3), settings,
}));
await ledger.close();
if (fresh) rmSync(dir, { recursive: true, force: true });
