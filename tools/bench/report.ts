import type { LatencyResult, ThroughputResult } from './load.js';
import type { StreamsMemory } from './hold-streams.js';
import type { Calibration } from './calibrate.js';
import { caseLabel, type Case } from './scenarios.js';

export interface Row {
  label: string;
  server: Case['server'];
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
  settings: { seconds: number; connections: number; latencySamples: number; latencyWarmup: number; streams: number; accounts: number };
  rows: Row[];
  portkeyStreams: { status: number; complete: boolean; note: string };
  streamsMemory: StreamsMemory;
  targets: TargetCheck[];
}

export function makeRow(c: Case, throughput: ThroughputResult, latency: LatencyResult): Row {
  return { label: caseLabel(c), server: c.server, client: c.client, upstream: c.upstream, stream: c.stream, throughput, latency };
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

const ours = (rows: Row[], stream: boolean) => rows.filter((r) => r.server === 'switchyard' && r.stream === stream);
const max = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
const f = (x: number | undefined, digits = 2) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits));

export function checkTargets(rows: Row[], mem: StreamsMemory): TargetCheck[] {
  const cpuJson = max(ours(rows, false).map((r) => r.throughput.cpuMsPerRequest ?? NaN));
  const cpuStream = max(ours(rows, true).map((r) => r.throughput.cpuMsPerRequest ?? NaN));
  const ratios = (['chat', 'messages'] as const).map((client) => {
    const mine = rows.find((r) => r.server === 'switchyard' && !r.stream && r.client === client && (client === 'chat') === (r.upstream === 'openai'));
    const theirs = rows.find((r) => r.server === 'portkey' && !r.stream && r.client === client && r.throughput.failures === 0);
    return mine && theirs ? { client, ratio: mine.throughput.rps / theirs.throughput.rps } : undefined;
  }).filter((x) => x !== undefined);
  const worstRatio = ratios.length ? Math.min(...ratios.map((r) => r.ratio)) : NaN;
  const added = max(ours(rows, false).map((r) => r.addedP50Ms ?? NaN));
  const check = (name: string, limit: string, value: number, measured: string, ok: (v: number) => boolean): TargetCheck => ({
    name, limit, measured, pass: Number.isNaN(value) ? null : ok(value),
  });
  return [
    check('gateway CPU per non-streaming request (worst case)', '≤ 0.4 ms', cpuJson, `${f(cpuJson, 3)} ms`, (v) => v <= 0.4),
    check('gateway CPU per 20-chunk stream (worst case)', '≤ 0.7 ms', cpuStream, `${f(cpuStream, 3)} ms`, (v) => v <= 0.7),
    check('throughput vs Portkey at 50 connections (non-streaming, same protocol)', '≥ 4×', worstRatio,
      ratios.map((r) => `${r.client} ${f(r.ratio, 1)}×`).join(', ') || 'Portkey did not answer', (v) => v >= 4),
    check('added p50 at 1 connection (non-streaming, worst case)', '≤ 0.5 ms', added, `${f(added, 3)} ms`, (v) => v <= 0.5),
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
      `${r.settings.seconds} s per case at ${r.settings.connections} connections (keys of ${r.settings.accounts} accounts rotated), ${r.settings.latencySamples} sequential requests timed at 1 connection after ${r.settings.latencyWarmup} untimed.`,
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
    '| target | limit | measured | |',
    '| --- | --- | --- | --- |',
    ...targets,
    '',
  ].join('\n');
}
