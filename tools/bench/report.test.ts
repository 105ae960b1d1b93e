import { describe, expect, it } from 'vitest';
import { addOverheads, checkTargets, markdown, type Report, type Row } from './report.js';
import { cpuMs, memoryMb } from './processes.js';

function row(server: Row['server'], client: Row['client'], upstream: Row['upstream'], stream: boolean, rps: number, cpu: number, p50: number): Row {
  return {
    label: `${server} ${client} ${upstream} ${stream}`,
    server, client, upstream, stream,
    throughput: { connections: 50, rps, p50Ms: 5, p99Ms: 9, requests: rps * 5, failures: 0, cpuMsPerRequest: cpu },
    latency: { samples: 100, p50Ms: p50, p99Ms: p50 * 2, ttfbP50Ms: p50 / 2, failures: 0 },
  };
}

const mem = { streams: 1000, open: 1000, idleRssMb: 100, rssMb: 250, failures: 0 };

describe('bench report', () => {
  const rows = [
    row('direct', 'chat', 'openai', false, 5000, 0.1, 0.5),
    row('switchyard', 'chat', 'openai', false, 2000, 0.3, 0.8),
    row('switchyard', 'chat', 'anthropic', false, 1800, 0.45, 0.9),
    row('portkey', 'chat', 'openai', false, 400, 2, 3),
    row('direct', 'chat', 'openai', true, 3000, 0.2, 1),
    row('switchyard', 'chat', 'openai', true, 1000, 0.6, 1.4),
  ];
  addOverheads(rows);

  it('measures added latency against the direct upstream of the same client and mode', () => {
    expect(rows[1].addedP50Ms).toBeCloseTo(0.3);
    expect(rows[5].addedP50Ms).toBeCloseTo(0.4);
    expect(rows[5].addedTtfbMs).toBeCloseTo(0.2);
    expect(rows[0].addedP50Ms).toBeUndefined();
  });

  it('judges each target on the worst case, and the Portkey ratio on same-protocol rows', () => {
    const t = checkTargets(rows, mem);
    expect(t.map((x) => x.pass)).toEqual([false, true, true, true, true]);
    expect(t[0].measured).toBe('0.450 ms');
    expect(t[2].measured).toBe('chat 5.0×');
    expect(checkTargets(rows, { ...mem, open: 999 })[4].pass).toBeNull();
  });

  it('renders a table row per case', () => {
    const report = { date: 'd', machine: { cpus: 2, node: '20', calibration: { busyRoundTripCpuUs: 50, wakeRoundTripCpuUs: 170 } }, database: 'pg', settings: { seconds: 5, connections: 50, latencySamples: 100, latencyWarmup: 10, streams: 1000, accounts: 50 }, rows, portkeyStreams: { status: 500, complete: false, note: 'x' }, streamsMemory: mem, targets: checkTargets(rows, mem) } satisfies Report;
    const md = markdown(report);
    expect(md.split('\n').filter((l) => l.startsWith('| switchyard'))).toHaveLength(3);
    expect(md).toContain('170 µs when it has to be woken');
  });

  it('reads CPU and memory of a process from /proc', () => {
    expect(cpuMs(process.pid)).toBeGreaterThan(0);
    expect(memoryMb(process.pid)).toBeGreaterThan(10);
  });
});
