/**
 * `make bench`: Switchyard vs the direct upstream vs the Portkey gateway, side by side, in one run.
 *
 * Every server runs in its own process (the fake upstream, the gateway, Portkey) so the gateway's
 * CPU can be read from /proc/<pid>/stat; autocannon and the 1-connection client run here. The
 * gateway runs from dist/ (`make bench` builds it first), as a deployment would run it.
 * Ledger on PostgreSQL when DATABASE_URL is set (in schema SWITCHYARD_DB_SCHEMA, default
 * switchyard_bench, dropped before and after), else in-memory PGlite.
 *
 * Gateway cases rotate the keys of one account (a team sharing one balance: the headline) or of
 * many accounts, one key each; then the default path (`make run`: compiled, the embedded database in a data directory)
 * is started and measured on its own (see embedded.ts).
 *
 * Knobs: BENCH_SECONDS (5 per case at 50 connections), BENCH_LATENCY_REQUESTS (1000 sequential, after 100 untimed),
 * BENCH_STREAMS (1000), BENCH_ACCOUNTS (50: the many-accounts cases), BENCH_KEYS (50: the one account's keys),
 * BENCH_ONLY (substring filter on case labels), BENCH_MEMORY_ONLY=1 (the slow streams' memory case alone), BENCH_CPU_PROF=1 (the gateway writes a V8 CPU profile into
 * .bench/prof when it stops).
 * Writes .bench/<timestamp>.json (raw) and bench/latest.json + bench/latest.md (committed).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { measureStreamsMemory } from './hold-streams.js';
import { startEmbedded, type EmbeddedStart } from './embedded.js';
import { DEFAULT_EMBEDDED, EMBEDDED_DATABASES, type EmbeddedDatabase } from '../../src/ledger/data-dir.js';
import { calibrate } from './calibrate.js';
import { LATENCY_WARMUP_REQUESTS, measureLatency, measureThroughput, probe, warmUp } from './load.js';
import { freePort, startNode, stopAll } from './processes.js';
import { addOverheads, checkTargets, makeRow, markdown, telemetryCost, type Report, type Row } from './report.js';
import {
  caseLabel, catalogYaml, directCase, gatewayCase, looksComplete, portkeyCase, requestBody, SLOW_MODEL, type Case,
} from './scenarios.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 50;
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 1000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const ONLY = process.env.BENCH_ONLY;
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 50);
const KEYS = Number(process.env.BENCH_KEYS ?? 50);
const DATABASE_URL = process.env.DATABASE_URL;
const SCHEMA = process.env.SWITCHYARD_DB_SCHEMA || 'switchyard_bench';
const SLOW_CHUNK_DELAY_MS = 1000;
/** Unmeasured requests before each case (three times as many when a path is first warmed). */
const WARMUP_REQUESTS = 1000;
const ROOT = resolve(import.meta.dirname, '../..');
const RAW_DIR = resolve(ROOT, '.bench');
/** The gateway as deployed, compiled by `make build` (tsx's on-the-fly transform costs ~10% CPU). */
const BUILT_ENTRY = resolve(ROOT, 'dist/src/main.js');

async function startFake() {
  const { child, match } = await startNode(
    'fake-upstream',
    ['--import', 'tsx', 'tools/fake-upstream/main.ts', '--port', '0', '--scenario', 'words:20'],
    {},
    /listening on (http:\/\/[\d.]+:\d+)/,
  );
  return { child, url: match[1] };
}

function gatewayEnv(fakeUrl: string, adminKey: string) {
  const config = resolve(RAW_DIR, 'catalog.yaml');
  writeFileSync(config, catalogYaml(fakeUrl, SLOW_CHUNK_DELAY_MS));
  return { HOST: '127.0.0.1', PORT: '0', SWITCHYARD_CONFIG: config, SWITCHYARD_ADMIN_KEY: adminKey, LOG_LEVEL: 'info' };
}

async function startSwitchyard(fakeUrl: string, adminKey: string) {
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(RAW_DIR, 'prof')}`] : [];
  const db = DATABASE_URL ? { DATABASE_URL, SWITCHYARD_DB_SCHEMA: SCHEMA } : { DATABASE_URL: '', SWITCHYARD_DATA_DIR: 'memory://', SWITCHYARD_EMBEDDED_DB: 'pglite' };
  const { child, match } = await startNode(
    'switchyard',
    [...prof, BUILT_ENTRY, 'serve'],
    { ...db, ...gatewayEnv(fakeUrl, adminKey) },
    /"url":"(http:\/\/[^"]+)"[^\n]*switchyard is listening/,
  );
  return { child, url: match[1] };
}

/** Portkey is installed with the bench's own tools (tools/bench/package.json, `make bench`). */
const PORTKEY_ENTRY = fileURLToPath(new URL('./node_modules/@portkey-ai/gateway/build/start-server.js', import.meta.url));

async function startPortkey() {
  const port = await freePort();
  const { child } = await startNode(
    'portkey',
    [PORTKEY_ENTRY, `--port=${port}`, '--headless'],
    { NODE_ENV: 'production' },
    /Ready for connections/,
  );
  return { child, url: `http://127.0.0.1:${port}` };
}

/** `accounts` funded accounts with `perAccount` keys each, made through the admin API like an operator would. */
async function createKeys(url: string, adminKey: string, accounts: number, perAccount = 1): Promise<string[]> {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const keys: string[] = [];
  for (let i = 0; i < accounts; i++) {
    const account = await post('/admin/accounts', { name: `bench-${i}`, balance: 1_000_000_000_000_000 });
    for (let k = 0; k < perAccount; k++) keys.push((await post('/admin/keys', { account_id: account.id, name: `bench-${k}` })).key);
  }
  return keys;
}

/** Runs `work` on a connection of its own to the bench's PostgreSQL; nothing on PGlite. */
async function withDatabase(work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  if (!DATABASE_URL) return;
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

const quotedId = (name: string) => `"${name.replace(/"/g, '')}"`;

function dropSchema(): Promise<void> {
  return withDatabase((client) => client.query(`DROP SCHEMA IF EXISTS ${quotedId(SCHEMA)} CASCADE`));
}

/**
 * VACUUM ANALYZE of the gateway's tables once the warm-up has filled them, as autovacuum keeps a
 * running database. Without it the first cases measured pay for autovacuum's pass over thousands
 * of fresh rows (PostgreSQL's CPU per request and the latency at one connection were 3-4x those
 * of the later cases).
 */
function vacuumSchema(): Promise<void> {
  return withDatabase(async (client) => {
    const { rows } = await client.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE schemaname = $1', [SCHEMA]);
    for (const { tablename } of rows) await client.query(`VACUUM ANALYZE ${quotedId(SCHEMA)}.${quotedId(tablename)}`);
  });
}

interface KeySets { team: string[]; spread: string[] }

/**
 * Every gateway path on one account's keys (the headline); the same-protocol JSON paths again on
 * many accounts' keys, for the one-account/many-accounts ratio measured in the same run.
 */
function buildCases(gw: string, keys: KeySets, fake: string, portkey: string): Case[] {
  const cases: Case[] = [];
  for (const stream of [false, true]) {
    for (const client of ['chat', 'messages'] as const) {
      const same = client === 'chat' ? 'openai' : 'anthropic';
      cases.push(directCase(fake, client, stream));
      cases.push(gatewayCase(gw, keys.team, 1, client, same, stream));
      if (!stream) cases.push(gatewayCase(gw, keys.spread, ACCOUNTS, client, same, stream));
      cases.push(gatewayCase(gw, keys.team, 1, client, client === 'chat' ? 'anthropic' : 'openai', stream));
      // Portkey 1.15.2 breaks streamed answers (its issue #1389): it is compared on non-streaming only.
      if (!stream) cases.push(portkeyCase(portkey, fake, client, false));
    }
  }
  return cases.filter((c) => !ONLY || caseLabel(c).includes(ONLY));
}

async function measureCase(c: Case, pids: Partial<Record<Case['server'], number>>): Promise<Row> {
  const { status, text } = await probe(c.target);
  if (!looksComplete(c, status, text)) throw new Error(`${caseLabel(c)}: unexpected answer ${status}: ${text.slice(0, 300)}`);
  const withDb = c.server === 'switchyard' && Boolean(DATABASE_URL);
  const pid = pids[c.server];
  await warmUp(c.target, WARMUP_REQUESTS); // JIT, pools, connections
  const throughput = await measureThroughput(c.target, CONNECTIONS, SECONDS, pid, withDb);
  const latency = await measureLatency(c.target, LATENCY_REQUESTS, pid);
  const row = makeRow(c, throughput, latency);
  process.stderr.write(`  ${row.label}: ${throughput.rps.toFixed(0)} req/s, CPU ${throughput.cpuMsPerRequest?.toFixed(3) ?? '–'} ms/req, p50@1 ${latency.p50Ms.toFixed(2)} ms, CPU@1 ${latency.cpuMsPerRequest?.toFixed(3) ?? '–'} ms/req\n`);
  return row;
}

/**
 * The default path, alone on the machine's share of the run (the deployed gateway is stopped by
 * then): its start, its memory at rest, and its JSON case on one account's keys.
 */
async function measureEmbedded(fakeUrl: string, adminKey: string, rows: Row[], kind: EmbeddedDatabase, otlpUrl?: string): Promise<EmbeddedStart | undefined> {
  const telemetry = otlpUrl !== undefined;
  if (ONLY && !`embedded ${kind} chat→openai json, 1 account${telemetry ? ', telemetry on' : ''}`.includes(ONLY)) return undefined;
  process.stderr.write(`  the default path (make run: compiled, ${kind} in a data directory${telemetry ? ', OpenTelemetry exporting' : ''})...\n`);
  // Telemetry on as an operator turns it on: the standard variables, http/protobuf to a collector (a sink here).
  const otel = telemetry ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_METRIC_EXPORT_INTERVAL: '5000' } : {};
  const emb = await startEmbedded(ROOT, { ...gatewayEnv(fakeUrl, adminKey), ...otel }, kind);
  try {
    const keys = await createKeys(emb.url, adminKey, 1, KEYS);
    const c = { ...gatewayCase(emb.url, keys, 1, 'chat', 'openai', false, 'embedded'), database: kind, ...(telemetry ? { telemetry } : {}) };
    await warmUp(c.target, WARMUP_REQUESTS * 3);
    rows.push(await measureCase(c, { embedded: emb.child.pid }));
    return emb.start;
  } finally {
    await emb.child.stop();
    emb.cleanup();
  }
}

/** The default path on the default embedded database, then on each other one, for comparison. */
async function measureEmbeddedAll(fakeUrl: string, adminKey: string, rows: Row[]): Promise<{ embedded?: EmbeddedStart; embeddedAlternatives: EmbeddedStart[] }> {
  const embedded = await measureEmbedded(fakeUrl, adminKey, rows, DEFAULT_EMBEDDED);
  const embeddedAlternatives: EmbeddedStart[] = [];
  for (const kind of EMBEDDED_DATABASES.filter((k) => k !== DEFAULT_EMBEDDED)) {
    const start = await measureEmbedded(fakeUrl, adminKey, rows, kind);
    if (start) embeddedAlternatives.push(start);
  }
  return { embedded, embeddedAlternatives };
}

async function portkeyStreamProbe(portkey: string, fake: string) {
  const c = portkeyCase(portkey, fake, 'chat', true);
  try {
    const { status, text } = await probe(c.target);
    const complete = looksComplete(c, status, text);
    return { status, complete, note: complete ? `status ${status}, a complete stream` : `status ${status}, not a complete stream: ${JSON.stringify(text.slice(0, 160))}` };
  } catch (e) {
    return { status: 0, complete: false, note: `failed: ${(e as Error).message}` };
  }
}

/**
 * The memory case: a fresh gateway process, so its resident memory measures the streams, not the
 * garbage the load cases left for the next major GC (which swings RSS by 100 MB either way).
 */
async function measureFreshStreams(fakeUrl: string, adminKey: string) {
  process.stderr.write(`  ${STREAMS} slow streams...\n`);
  const fresh = await startSwitchyard(fakeUrl, adminKey);
  const freshKeys = await createKeys(fresh.url, adminKey, 1, KEYS);
  const slow = gatewayCase(fresh.url, freshKeys, 1, 'chat', 'openai', true);
  slow.target.body = requestBody(SLOW_MODEL, true);
  const streamsMemory = await measureStreamsMemory(slow.target, STREAMS, fresh.child.pid);
  await fresh.child.stop();
  return streamsMemory;
}

/** BENCH_MEMORY_ONLY=1: the memory case alone (its figures on stdout; bench/latest.* left alone). */
async function memoryOnly(): Promise<void> {
  const adminKey = `sk-admin-${randomBytes(12).toString('hex')}`;
  const fake = await startFake();
  const streamsMemory = await measureFreshStreams(fake.url, adminKey);
  process.stdout.write(JSON.stringify({ date: new Date().toISOString(), loadavg: os.loadavg(), streamsMemory }) + '\n');
}

async function main(): Promise<void> {
  if (!existsSync(BUILT_ENTRY)) throw new Error(`${BUILT_ENTRY} is missing: run make bench (it builds first) or make build`);
  mkdirSync(RAW_DIR, { recursive: true });
  mkdirSync(resolve(ROOT, 'bench'), { recursive: true });
  await dropSchema();
  if (process.env.BENCH_MEMORY_ONLY) return memoryOnly();
  const calibration = await calibrate();
  const adminKey = `sk-admin-${randomBytes(12).toString('hex')}`;
  process.stderr.write(`starting fake upstream, switchyard (${DATABASE_URL ? 'PostgreSQL' : 'PGlite'}) and portkey...\n`);
  const fake = await startFake();
  const gw = await startSwitchyard(fake.url, adminKey);
  const portkey = await startPortkey();
  const keys = { team: await createKeys(gw.url, adminKey, 1, KEYS), spread: await createKeys(gw.url, adminKey, ACCOUNTS) };
  const pids = { switchyard: gw.child.pid, direct: fake.child.pid, portkey: portkey.child.pid };
  const rows: Row[] = [];
  const cases = buildCases(gw.url, keys, fake.url, portkey.url);
  // Every gateway path is warmed before any is measured, so the first case measured does not
  // pay for the JIT compiling code that the later ones share.
  for (const c of cases) if (c.server !== 'direct') await warmUp(c.target, WARMUP_REQUESTS * 3);
  await vacuumSchema();
  for (const c of cases) rows.push(await measureCase(c, pids));
  const portkeyStreams = await portkeyStreamProbe(portkey.url, fake.url);
  await gw.child.stop();
  const { embedded, embeddedAlternatives } = await measureEmbeddedAll(fake.url, adminKey, rows);
  // The same default path with OpenTelemetry on: its row against the one above is the cost per request.
  const sink = await startOtlpSink();
  await measureEmbedded(fake.url, adminKey, rows, DEFAULT_EMBEDDED, sink.url);
  await sink.close();
  addOverheads(rows);
  const streamsMemory = await measureFreshStreams(fake.url, adminKey);
  const report: Report = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.versions.node, calibration },
    database: DATABASE_URL ? `PostgreSQL (schema ${SCHEMA})` : 'PGlite (in memory)',
    settings: { seconds: SECONDS, connections: CONNECTIONS, latencySamples: LATENCY_REQUESTS, latencyWarmup: LATENCY_WARMUP_REQUESTS, streams: STREAMS, accounts: ACCOUNTS, keys: KEYS },
    rows,
    portkeyStreams,
    streamsMemory,
    embedded,
    embeddedAlternatives,
    targets: checkTargets(rows, streamsMemory, embedded),
    telemetry: telemetryCost(rows),
  };
  const json = JSON.stringify(report, null, 2);
  writeFileSync(resolve(RAW_DIR, `${report.date.replace(/[:.]/g, '-')}.json`), json);
  if (!ONLY) {
    writeFileSync(resolve(ROOT, 'bench/latest.json'), json + '\n');
    writeFileSync(resolve(ROOT, 'bench/latest.md'), markdown(report));
  }
  process.stdout.write('\n' + markdown(report));
}

const shutdown = async (code: number) => {
  await stopAll();
  await dropSchema().catch(() => undefined);
  process.exit(code);
};
process.on('SIGINT', () => void shutdown(130));
main().then(
  () => shutdown(0),
  (e) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    void shutdown(1);
  },
);

/** A collector that takes every OTLP export and keeps nothing (what it costs to receive is not the gateway's). */
async function startOtlpSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
