import { describe, expect, it } from 'vitest';
import { addOverheads, checkTargets, markdown, telemetryCost, type Report, type Row } from './report.js';
import { cpuMs, memoryMb } from './processes.js';

function row(server: Row['server'], client: Row['client'], upstream: Row['upstream'], stream: boolean, rps: number, cpu: number, p50: number, accounts?: number): Row {
  return {
    label: `${server} ${client} ${upstream} ${stream} ${accounts ?? ''}`,
    server, accounts, client, upstream, stream,
    throughput: { connections: 50, rps, p50Ms: 5, p99Ms: 9, requests: rps * 5, failures: 0, cpuMsPerRequest: cpu, dbCpuMsPerRequest: cpu / 2, peakRssMb: 300 },
    latency: { samples: 100, p50Ms: p50, p99Ms: p50 * 2, ttfbP50Ms: p50 / 2, failures: 0 },
  };
}

const mem = { streams: 1000, open: 1000, idleRssMb: 100, rssMb: 250, failures: 0 };
const embedded = { kind: 'pglite' as const, database: 'PGlite', firstReadyMs: 3_000, restartReadyMs: 2_000, idleRssMb: 200 };

describe('bench report', () => {
  const rows = [
    row('direct', 'chat', 'openai', false, 5000, 0.1, 0.5),
    row('switchyard', 'chat', 'openai', false, 2000, 0.2, 0.8, 1),
    row('switchyard', 'chat', 'openai', false, 2100, 0.19, 0.8, 50),
    row('switchyard', 'chat', 'anthropic', false, 1800, 0.3, 0.9, 1),
    row('portkey', 'chat', 'openai', false, 400, 2, 3),
    row('embedded', 'chat', 'openai', false, 900, 0.7, 1.2, 1),
    row('direct', 'chat', 'openai', true, 3000, 0.2, 1),
    row('switchyard', 'chat', 'openai', true, 1000, 0.5, 1.4, 1),
  ];
  addOverheads(rows);

  it('measures added latency against the direct upstream of the same client and mode', () => {
    expect(rows[1].addedP50Ms).toBeCloseTo(0.3);
    expect(rows[7].addedP50Ms).toBeCloseTo(0.4);
    expect(rows[7].addedTtfbMs).toBeCloseTo(0.2);
    expect(rows[0].addedP50Ms).toBeUndefined();
  });

  it('judges the one-account targets on the worst one-account case, and throughput as ratios of same-protocol rows of the run', () => {
    const t = checkTargets(rows, mem, embedded);
    expect(t.map((x) => x.pass)).toEqual([false, false, true, true, true, true, true, false, true, true, true, true]);
    expect(t[0].measured).toBe('0.300 ms');
    expect(t[1].measured).toBe('0.150 ms');
    expect(t[2].measured).toBe('chat 0.95×');
    expect(t[3].measured).toBe('chat 5.0×');
    expect(t[6].measured).toBe('0.400 ms vs 2.500 ms');
    expect(t[7].measured).toBe('0.700 ms');
    expect(t[10].measured).toBe('3.0 s (restart: 2.0 s)');
  });

  it('has no verdict where a case was not measured', () => {
    const t = checkTargets(rows.filter((r) => r.server !== 'embedded' && r.accounts !== 50), { ...mem, open: 999 });
    expect(t.map((x) => x.pass)).toEqual([false, false, null, true, true, true, true, null, null, null, null, null]);
  });

  it('renders a table row per case', () => {
    const report = { date: 'd', machine: { cpus: 2, node: '20', calibration: { busyRoundTripCpuUs: 50, wakeRoundTripCpuUs: 170 } }, database: 'pg', settings: { seconds: 5, connections: 50, latencySamples: 100, latencyWarmup: 10, streams: 1000, accounts: 50, keys: 50 }, rows, portkeyStreams: { status: 500, complete: false, note: 'x' }, streamsMemory: mem, embedded, targets: checkTargets(rows, mem, embedded) } satisfies Report;
    const md = markdown(report);
    expect(md.split('\n').filter((l) => l.startsWith('| switchyard'))).toHaveLength(4);
    expect(md).toContain('ready 3.0 s after the first start');
    expect(md).toContain('170 µs when it has to be woken');
  });

  it('puts the case with telemetry on beside the same case off', () => {
    const off = { ...row('embedded', 'chat', 'openai', false, 900, 0.6, 1.2, 1), database: 'sqlite' };
    const pglite = { ...row('embedded', 'chat', 'openai', false, 800, 0.9, 1.5, 1), database: 'pglite' };
    const on = { ...row('embedded', 'chat', 'openai', false, 700, 0.75, 1.4, 1), database: 'sqlite', telemetry: true, label: 'embedded on' };
    on.latency.cpuMsPerRequest = 1.1;
    off.latency.cpuMsPerRequest = 1.0;
    const cost = telemetryCost([...rows, pglite, off, on])!;
    expect(cost).toEqual({ label: off.label, cpuOffMs: 0.6, cpuOnMs: 0.75, cpuOffAt1Ms: 1.0, cpuOnAt1Ms: 1.1, p50OffMs: 1.2, p50OnMs: 1.4 });
    expect(telemetryCost(rows)).toBeUndefined();
    const report = { date: 'd', machine: { cpus: 2, node: '24', calibration: { busyRoundTripCpuUs: 50, wakeRoundTripCpuUs: 170 } }, database: 'pg', settings: { seconds: 5, connections: 50, latencySamples: 100, latencyWarmup: 10, streams: 1000, accounts: 50, keys: 50 }, rows, portkeyStreams: { status: 500, complete: false, note: 'x' }, streamsMemory: mem, targets: [], telemetry: cost } satisfies Report;
    expect(markdown(report)).toContain('gateway CPU at 50 connections 0.600 ms off, 0.750 ms on: +0.150 ms (+25%); at 1 connection 1.000 ms off, 1.100 ms on: +0.100 ms (+10%)');
  });

  it('reads CPU and memory of a process from /proc', () => {
    expect(cpuMs(process.pid)).toBeGreaterThan(0);
    expect(memoryMb(process.pid)).toBeGreaterThan(10);
  });
});
