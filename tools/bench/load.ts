import autocannon from 'autocannon';
import { Pool } from 'undici';
import { cpuMs, memoryMb, postgresCpu, postgresCpuMsSince } from './processes.js';

/** One kind of request against one server. */
export interface Target {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Rotate this header over these values per request (the gateway's API keys). */
  rotate?: { header: string; values: string[] };
}

export interface ThroughputResult {
  connections: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx answers plus socket errors and timeouts: any of these invalidates the row. */
  failures: number;
  /** CPU of the server process under test per completed request (undefined: no process to read). */
  cpuMsPerRequest?: number;
  /** CPU of all postgres processes per request (PostgreSQL runs only; shared, indicative). */
  dbCpuMsPerRequest?: number;
  /** The server's highest VmRSS sampled (every 200 ms) during the run. */
  peakRssMb?: number;
}

export interface LatencyResult {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  /** Time to the first body byte (for streams: the first event). */
  ttfbP50Ms: number;
  failures: number;
  /** Server CPU per request when requests never overlap (no batching of syscalls or wake-ups). */
  cpuMsPerRequest?: number;
}

/** autocannon at `connections` for `seconds`; CPU is read from /proc before and after. */
export async function measureThroughput(
  t: Target,
  connections: number,
  seconds: number,
  pid?: number,
  withDb = false,
): Promise<ThroughputResult> {
  const cpu0 = pid ? cpuMs(pid) : 0;
  const db0 = withDb ? postgresCpu() : undefined;
  let peakRssMb = pid ? memoryMb(pid) : undefined;
  const sampler = pid ? setInterval(() => (peakRssMb = Math.max(peakRssMb!, memoryMb(pid))), 200) : undefined;
  const r = await autocannon({
    url: t.origin + t.path,
    method: 'POST',
    headers: t.headers,
    body: t.body,
    connections,
    duration: seconds,
    timeout: 30,
    ...(t.rotate ? { requests: [rotating(t)] } : {}),
  });
  clearInterval(sampler);
  const cpu = pid ? cpuMs(pid) - cpu0 : 0;
  const db = db0 ? postgresCpuMsSince(db0) : 0;
  const ok = r['2xx'];
  return {
    connections,
    rps: ok / seconds,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: ok,
    failures: r.non2xx + r.errors + r.timeouts,
    cpuMsPerRequest: pid && ok > 0 ? cpu / ok : undefined,
    dbCpuMsPerRequest: withDb && ok > 0 ? db / ok : undefined,
    peakRssMb,
  };
}

/**
 * `requests` requests at 10 connections, unmeasured: a count rather than a duration, so a loaded
 * machine warms the JIT and the pools as much as an idle one (1 s at 10 connections was ~150
 * requests on a busy day, and the first case measured then cost 2-3x the CPU of the next).
 */
export async function warmUp(t: Target, requests: number): Promise<void> {
  await autocannon({
    url: t.origin + t.path, method: 'POST', headers: t.headers, body: t.body, connections: 10, amount: requests, timeout: 30,
    ...(t.rotate ? { requests: [rotating(t)] } : {}),
  });
}

function rotating(t: Target) {
  const { header, values } = t.rotate!;
  let i = 0;
  return {
    method: 'POST',
    path: t.path,
    body: t.body,
    setupRequest: (req: { headers?: Record<string, string> }) => {
      req.headers = { ...t.headers, [header]: values[i++ % values.length] };
      return req;
    },
  };
}

/**
 * Requests sent one after another before the timed ones: the first requests on a new connection
 * run this client's code cold and meet a server fresh from the load phase (its garbage, its pools
 * shrinking), which is not what one connection costs in a steady state.
 */
export const LATENCY_WARMUP_REQUESTS = 100;

/**
 * `n` requests one after another on one keep-alive connection, timed with hrtime (autocannon's
 * histogram has 1 ms resolution, too coarse for sub-millisecond overheads), after
 * LATENCY_WARMUP_REQUESTS untimed ones.
 */
export async function measureLatency(t: Target, n: number, pid?: number): Promise<LatencyResult> {
  const pool = new Pool(t.origin, { connections: 1, pipelining: 1 });
  const send = () => pool.request({ method: 'POST', path: t.path, headers: t.headers, body: t.body });
  const total: number[] = [];
  const ttfb: number[] = [];
  let failures = 0;
  let cpu0 = 0;
  try {
    for (let i = 0; i < LATENCY_WARMUP_REQUESTS; i++) {
      await (await send()).body.dump();
    }
    cpu0 = pid ? cpuMs(pid) : 0;
    for (let i = 0; i < n; i++) {
      const start = process.hrtime.bigint();
      const res = await send();
      let first: bigint | undefined;
      for await (const chunk of res.body) {
        if (first === undefined && (chunk as Buffer).length > 0) first = process.hrtime.bigint();
      }
      const end = process.hrtime.bigint();
      if (res.statusCode >= 300) {
        failures++;
        continue;
      }
      total.push(Number(end - start) / 1e6);
      ttfb.push(Number((first ?? end) - start) / 1e6);
    }
  } finally {
    await pool.close();
  }
  const cpuMsPerRequest = pid && total.length > 0 ? (cpuMs(pid) - cpu0) / total.length : undefined;
  return { samples: total.length, p50Ms: quantile(total, 0.5), p99Ms: quantile(total, 0.99), ttfbP50Ms: quantile(ttfb, 0.5), failures, cpuMsPerRequest };
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** One request, for checking that a target answers what it should before it is measured. */
export async function probe(t: Target): Promise<{ status: number; text: string }> {
  const res = await fetch(t.origin + t.path, { method: 'POST', headers: t.headers, body: t.body });
  return { status: res.status, text: await res.text() };
}
