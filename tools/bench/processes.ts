import { spawn, type ChildProcess } from 'node:child_process';
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A server the bench started in its own process, so its CPU and memory can be read from /proc. */
export interface Child {
  name: string;
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

const children = new Set<Child>();

/** Spawns `node <args>` and resolves once its output matches `ready` (the match is returned). */
export function startNode(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs = 90_000,
): Promise<{ child: Child; match: RegExpMatchArray }> {
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const child: Child = {
    name,
    pid: proc.pid!,
    output: () => text,
    stop: () => stopProcess(proc, () => children.delete(child)),
  };
  children.add(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} not ready after ${timeoutMs} ms`)), timeoutMs);
    const fail = (e: Error) => {
      clearTimeout(timer);
      void child.stop();
      reject(new Error(`${e.message}\n--- ${name} output ---\n${text.slice(-4000)}`));
    };
    const onData = (buf: Buffer) => {
      // Keep only the tail: the gateway logs one line per 5xx, and the bench never needs more.
      text = (text + buf.toString('utf8')).slice(-64_000);
      const match = ready.exec(text);
      if (match && timer) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        proc.stdout!.on('data', (b: Buffer) => (text = (text + b.toString('utf8')).slice(-64_000)));
        resolve({ child, match });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (b: Buffer) => (text = (text + b.toString('utf8')).slice(-64_000)));
    proc.once('exit', (code) => fail(new Error(`${name} exited with code ${code} before it was ready`)));
  });
}

function stopProcess(proc: ChildProcess, forget: () => void): Promise<void> {
  forget();
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** Stops every child still running (also on errors and Ctrl-C). */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => c.stop()));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const TICKS_PER_SECOND = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** User + system CPU of a process in milliseconds (10 ms resolution; divide by many requests). */
export function cpuMs(pid: number): number {
  return statTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) * (1000 / TICKS_PER_SECOND);
}

function statTicks(stat: string): number {
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Resident set size in MB (VmRSS), or its high-water mark (VmHWM). */
export function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU ticks of every `postgres` process, by pid. */
export type PostgresCpu = Map<string, number>;

export function postgresCpu(): PostgresCpu {
  const ticks: PostgresCpu = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.includes('(postgres)')) ticks.set(entry, statTicks(stat));
    } catch {
      // The process ended between readdir and read.
    }
  }
  return ticks;
}

/**
 * CPU milliseconds the `postgres` processes spent since `before`, counted per process so that a
 * backend exiting meanwhile drops out of both ends (its last ticks are lost, never subtracted).
 * Other test runs share the server, so this is indicative only; the gateway's own CPU is the
 * robust number.
 */
export function postgresCpuMsSince(before: PostgresCpu): number {
  let ticks = 0;
  for (const [pid, now] of postgresCpu()) ticks += now - (before.get(pid) ?? 0);
  return ticks * (1000 / TICKS_PER_SECOND);
}
