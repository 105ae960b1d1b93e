import type { LatencyResult, ThroughputResult } from './load.js';
import type { StreamsMemory } from './hold-streams.js';
import type { EmbeddedStart } from './embedded.js';
import type { Calibration } from './calibrate.js';
import { caseLabel, type Case } from './scenarios.js';

export interface Row {
  label: string;
  server: Case['server'];
  /** Embedded rows: the embedded database. */
  database?: string;
  /** Measured with OpenTelemetry exporting (the cost of telemetry: compare with the same row without). */
  telemetry?: boolean;
  accounts?: number;
  client: Case['client'];
  upstream: Case['upstream'];
  stream: boolean;
  throughput: ThroughputResult;
  latency: LatencyResult;
  /** p50 at one connection minus the direct upstream's for the same client request. */
  addedP50Ms?: number;
  /** Time-to-first-byte at one connection minus the direct upstream's. */
  addedTtfbMs?: number;
}

export interface TargetCheck {
  name: string;
  limit: string;
  measured: string;
  pass: boolean | null;
}

export interface Report {
  date: string;
  machine: { cpus: number; node: string; calibration: Calibration };
  database: string;
  settings: { seconds: number; connections: number; latencySamples: number; latencyWarmup: number; streams: number; accounts: number; keys: number };
  rows: Row[];
  portkeyStreams: { status: number; complete: boolean; note: string };
  streamsMemory: StreamsMemory;
  /** The default path's start (undefined when BENCH_ONLY left it out). */
  embedded?: EmbeddedStart;
  /** The other embedded databases, measured the same way in the same run for comparison. */
  embeddedAlternatives?: EmbeddedStart[];
  targets: TargetCheck[];
  /** Telemetry's cost: the same case with OpenTelemetry off and on (undefined when BENCH_ONLY left either out). */
  telemetry?: TelemetryCost;
}

/** One case measured with telemetry off and on, in the same run: what exporting costs a request. */
export interface TelemetryCost {
  label: string;
  /** Gateway CPU per request at 50 connections, off and on (ms). */
  cpuOffMs: number;
  cpuOnMs: number;
  /** The same at 1 connection (no batching of wake-ups and exports over concurrent requests). */
  cpuOffAt1Ms?: number;
  cpuOnAt1Ms?: number;
  /** p50 at 1 connection, off and on (ms). */
  p50OffMs: number;
  p50OnMs: number;
}

export function makeRow(c: Case, throughput: ThroughputResult, latency: LatencyResult): Row {
  return { label: caseLabel(c), server: c.server, ...(c.database && { database: c.database }), ...(c.telemetry && { telemetry: true }), accounts: c.accounts, client: c.client, upstream: c.upstream, stream: c.stream, throughput, latency };
}

/** Fills in the added latencies: each row against the direct upstream for the same client and mode. */
export function addOverheads(rows: Row[]): void {
  for (const r of rows) {
    if (r.server === 'direct') continue;
    const base = rows.find((d) => d.server === 'direct' && d.client === r.client && d.stream === r.stream);
    if (!base) continue;
    r.addedP50Ms = r.latency.p50Ms - base.latency.p50Ms;
    r.addedTtfbMs = r.latency.ttfbP50Ms - base.latency.ttfbP50Ms;
  }
}

/** The row measured with telemetry on and the same case without it, side by side. */
export function telemetryCost(rows: Row[]): TelemetryCost | undefined {
  const on = rows.find((r) => r.telemetry);
  const off = on && rows.find((r) => !r.telemetry && r.server === on.server && r.database === on.database && r.client === on.client
    && r.upstream === on.upstream && r.stream === on.stream && r.accounts === on.accounts);
  if (!on || !off || on.throughput.cpuMsPerRequest === undefined || off.throughput.cpuMsPerRequest === undefined) return undefined;
  return {
    label: off.label,
    cpuOffMs: off.throughput.cpuMsPerRequest,
    cpuOnMs: on.throughput.cpuMsPerRequest,
    cpuOffAt1Ms: off.latency.cpuMsPerRequest,
    cpuOnAt1Ms: on.latency.cpuMsPerRequest,
    p50OffMs: off.latency.p50Ms,
    p50OnMs: on.latency.p50Ms,
  };
}

function telemetryLine(t: TelemetryCost): string {
  const cost = (off: number | undefined, on: number | undefined) =>
    off === undefined || on === undefined ? '–' : `${f(off, 3)} ms off, ${f(on, 3)} ms on: ${on >= off ? '+' : ''}${f(on - off, 3)} ms (${on >= off ? '+' : ''}${f(((on - off) / off) * 100, 0)}%)`;
  return `Telemetry's cost per request (${t.label}, OpenTelemetry exporting traces, metrics and logs over http/protobuf to a sink): ` +
    `gateway CPU at 50 connections ${cost(t.cpuOffMs, t.cpuOnMs)}; at 1 connection ${cost(t.cpuOffAt1Ms, t.cpuOnAt1Ms)}; ` +
    `p50 at 1 connection ${f(t.p50OffMs)} ms off, ${f(t.p50OnMs)} ms on.`;
}

const max = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
const min = (xs: number[]) => (xs.length ? Math.min(...xs) : NaN);
const f = (x: number | undefined, digits = 2) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits));
const sameProtocol = (r: Row) => (r.client === 'chat') === (r.upstream === 'openai');
/** The deployed gateway on one account's keys: the case the targets are about. */
const team = (rows: Row[], stream: boolean) => rows.filter((r) => r.server === 'switchyard' && r.accounts === 1 && r.stream === stream);
const worst = (rows: Row[], pick: (r: Row) => number | undefined) => max(rows.map((r) => pick(r) ?? NaN));

/** Same-protocol JSON throughput of one account's keys over `other`'s, per client, in this run. */
function ratios(rows: Row[], other: (r: Row) => boolean) {
  return (['chat', 'messages'] as const).flatMap((client) => {
    const mine = team(rows, false).find((r) => r.client === client && sameProtocol(r));
    const theirs = rows.find((r) => other(r) && !r.stream && r.client === client && sameProtocol(r) && r.throughput.failures === 0);
    return mine && theirs ? [{ client, ratio: mine.throughput.rps / theirs.throughput.rps }] : [];
  });
}

/**
 * The issue's targets, each judged on its worst case. Where the machine's speed matters, a ratio
 * of two rows of this run: throughput against many accounts and against Portkey, latency against
 * Portkey's.
 */
export function checkTargets(rows: Row[], mem: StreamsMemory, embedded?: EmbeddedStart): TargetCheck[] {
  const check = (name: string, limit: string, value: number, measured: string, ok: (v: number) => boolean): TargetCheck => ({
    name, limit, measured, pass: Number.isNaN(value) ? null : ok(value),
  });
  const ratioCheck = (name: string, limit: number, rs: Array<{ client: string; ratio: number }>, none: string, digits: number) =>
    check(name, `≥ ${limit}×`, min(rs.map((r) => r.ratio)), rs.map((r) => `${r.client} ${f(r.ratio, digits)}×`).join(', ') || none, (v) => v >= limit);
  const json = team(rows, false);
  const cpuJson = worst(json, (r) => r.throughput.cpuMsPerRequest);
  const dbJson = worst(json, (r) => r.throughput.dbCpuMsPerRequest);
  const cpuStream = worst(team(rows, true), (r) => r.throughput.cpuMsPerRequest);
  const added = worst(json, (r) => r.addedP50Ms);
  const portkeyP50 = min(rows.filter((r) => r.server === 'portkey' && r.latency.failures === 0).map((r) => r.addedP50Ms ?? NaN));
  // The default path is the default embedded database's row; the others are there for comparison.
  const emb = rows.find((r) => r.server === 'embedded' && !r.telemetry && (r.database === undefined || r.database === embedded?.kind));
  const embCpu = emb?.throughput.cpuMsPerRequest ?? NaN;
  return [
    check('one account: gateway CPU per non-streaming request (worst case)', '≤ 0.25 ms', cpuJson, `${f(cpuJson, 3)} ms`, (v) => v <= 0.25),
    check('one account: database CPU per non-streaming request (worst case)', '≤ 0.05 ms', dbJson, `${f(dbJson, 3)} ms`, (v) => v <= 0.05),
    ratioCheck('one account vs many accounts: throughput at 50 connections (non-streaming, same protocol)', 0.9,
      ratios(rows, (r) => r.server === 'switchyard' && r.accounts !== 1), 'no many-accounts case', 2),
    ratioCheck('one account vs Portkey: throughput at 50 connections (non-streaming, same protocol)', 4,
      ratios(rows, (r) => r.server === 'portkey'), 'Portkey did not answer', 1),
    check('one account: gateway CPU per 20-chunk stream (worst case)', '≤ 0.6 ms', cpuStream, `${f(cpuStream, 3)} ms`, (v) => v <= 0.6),
    check('one account: added p50 at 1 connection (non-streaming, worst case)', '≤ 0.5 ms', added, `${f(added, 3)} ms`, (v) => v <= 0.5),
    check('one account: added p50 at 1 connection, against Portkey\'s (best of its rows)', '≤ Portkey', added - portkeyP50,
      `${f(added, 3)} ms vs ${f(portkeyP50, 3)} ms`, (v) => v <= 0),
    check('default path (make run): gateway CPU per non-streaming request', '≤ 0.6 ms', embCpu, `${f(embCpu, 3)} ms`, (v) => v <= 0.6),
    check('default path: RSS idle', '≤ 250 MB', embedded?.idleRssMb ?? NaN, `${f(embedded?.idleRssMb, 0)} MB`, (v) => v <= 250),
    check('default path: RSS under the load of 50 connections (peak)', '≤ 350 MB', emb?.throughput.peakRssMb ?? NaN, `${f(emb?.throughput.peakRssMb, 0)} MB`, (v) => v <= 350),
    check('default path: ready after start (first start, empty data directory)', '≤ 5 s', (embedded?.firstReadyMs ?? NaN) / 1000,
      `${f((embedded?.firstReadyMs ?? NaN) / 1000, 1)} s (restart: ${f((embedded?.restartReadyMs ?? NaN) / 1000, 1)} s)`, (v) => v <= 5),
    check(`RSS with ${mem.streams} concurrent slow streams`, '≤ 300 MB', mem.open === mem.streams ? mem.rssMb : NaN,
      `${f(mem.rssMb, 0)} MB (${mem.open}/${mem.streams} open, idle ${f(mem.idleRssMb, 0)} MB)`, (v) => v <= 300),
  ];
}

export function markdown(r: Report): string {
  const head = '| case | req/s @50 | p50 @50 | p99 @50 | CPU ms/req | DB CPU ms/req | p50 @1 | added p50 @1 | TTFB @1 | added TTFB | failures |';
  const lines = r.rows.map((x) => {
    const t = x.throughput;
    const l = x.latency;
    return `| ${x.label} | ${f(t.rps, 0)} | ${f(t.p50Ms, 0)} ms | ${f(t.p99Ms, 0)} ms | ${f(t.cpuMsPerRequest, 3)} | ${f(t.dbCpuMsPerRequest, 3)} | ${f(l.p50Ms)} ms | ${f(x.addedP50Ms)} | ${x.stream ? `${f(l.ttfbP50Ms)} ms` : '–'} | ${x.stream ? f(x.addedTtfbMs) : '–'} | ${t.failures + l.failures} |`;
  });
  const cal = r.machine.calibration;
  const targets = r.targets.map((t) => `| ${t.name} | ${t.limit} | ${t.measured} | ${t.pass === null ? 'n/a' : t.pass ? 'pass' : 'MISS'} |`);
  return [
    `Measured ${r.date} on ${r.machine.cpus} cores, Node ${r.machine.node}, ledger on ${r.database}; ` +
      `${r.settings.seconds} s per case at ${r.settings.connections} connections (keys rotated per request: ${r.settings.keys} keys of 1 account, or 1 key each of ${r.settings.accounts} accounts), ` +
      `${r.settings.latencySamples} sequential requests timed at 1 connection after ${r.settings.latencyWarmup} untimed.`,
    ...(r.embedded ? ['', `Default path (\`make run\`): ${r.embedded.database}; ready ${f(r.embedded.firstReadyMs / 1000, 1)} s after the first start, ` +
      `${f(r.embedded.restartReadyMs / 1000, 1)} s after a restart; ${f(r.embedded.idleRssMb, 0)} MB RSS idle.`] : []),
    ...(r.embeddedAlternatives ?? []).map((e) => `Compared in the same run: ${e.database}; ready ${f(e.firstReadyMs / 1000, 1)} s after the first start, ` +
      `${f(e.restartReadyMs / 1000, 1)} s after a restart; ${f(e.idleRssMb, 0)} MB RSS idle.`),
    '',
    `Machine calibration: a round trip to another process costs ${f(cal.busyRoundTripCpuUs, 0)} µs of CPU while it is awake and ` +
      `${f(cal.wakeRoundTripCpuUs, 0)} µs when it has to be woken (tools/bench/calibrate.ts).`,
    '',
    head,
    '|' + ' --- |'.repeat(11),
    ...lines,
    '',
    `Portkey streaming probe: ${r.portkeyStreams.note}`,
    '',
    ...(r.telemetry ? [telemetryLine(r.telemetry), ''] : []),
    '| target | limit | measured | |',
    '| --- | --- | --- | --- |',
    ...targets,
    '',
  ].join('\n');
}
