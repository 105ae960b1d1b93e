/**
 * The gateway's own cost per request, the ledger left out: a micro-benchmark for changes to the
 * request path outside the ledger (HTTP, validation, routing, counting, translation, transport,
 * SSE, metrics, the request log), less noisy than `make bench`'s rows, which also carry the
 * ledger's round trips to PostgreSQL and the wake-ups of three processes.
 *
 *   make build && rm -rf .bench/base && cp -r dist .bench/base   # the build before a change
 *   (change, make build)
 *   node --import tsx tools/bench/request-cpu.ts .bench/base dist
 *
 * Each argument is a compiled tree (`src/app/start-gateway.js` in it; a copy outside `dist/` finds
 * its packages in the repository's node_modules). Each build runs in a child process of its own:
 * its gateway in-process, with a ledger that answers at once (one account, every hold passes,
 * every settle is taken) and its log lines written to /dev/null in the request log's blocks,
 * against one fake upstream (`words:20`, its own process). The child drives its gateway with
 * REQUEST_CPU_CONNECTIONS (50) keep-alive connections and reads its own CPU time
 * (`process.cpuUsage`, after a full collection) over REQUEST_CPU_REQUESTS (3000) requests; the same
 * client against the fake directly is measured too and subtracted, so the figure is the gateway's.
 * Per case: REQUEST_CPU_WARMUP (3000) unmeasured requests on each build, then REQUEST_CPU_ROUNDS (7)
 * turns, each build measured once per turn, their order reversed every other turn, so the
 * machine's other load falls on all alike; the report gives each build's median and every turn's.
 *
 * REQUEST_CPU_COUNT=instructions counts instructions under valgrind's callgrind instead (a
 * measurement is thousands of instructions per request; the start and the warm-up run uncounted):
 * slow (a few minutes per case), but what other processes do on the machine hardly moves it.
 * At REQUEST_CPU_CONNECTIONS=1 turns differ by a few percent (V8's optimising compiler finishes
 * its work at other moments in each); at 50 connections the batching of events varies far more.
 * REQUEST_CPU_CASES (substrings of the case labels, comma-separated) picks cases,
 * REQUEST_CPU_NODE_FLAGS adds node flags to the children, REQUEST_CPU_PROF=<index of a build>
 * has that child write a V8 CPU profile to .bench/prof (read it with top-profile.ts).
 * A tool for a developer, not a test: figures compare only within one run.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { Pool } from 'undici';
import { startNode, stopAll } from './processes.js';
import { catalogYaml, requestBody, type Client, type Upstream } from './scenarios.js';

const ROUNDS = Number(process.env.REQUEST_CPU_ROUNDS ?? 7);
const REQUESTS = Number(process.env.REQUEST_CPU_REQUESTS ?? 3000);
const CONNECTIONS = Number(process.env.REQUEST_CPU_CONNECTIONS ?? 50);
const WARMUP = Number(process.env.REQUEST_CPU_WARMUP ?? 3000);
/** Count instructions under valgrind's callgrind instead of reading the CPU time. */
const INSTRUCTIONS = process.env.REQUEST_CPU_COUNT === 'instructions';
const ROOT = resolve(import.meta.dirname, '../..');
const RAW_DIR = resolve(ROOT, '.bench');
const CALLGRIND_DIR = resolve(RAW_DIR, 'callgrind');

interface Measured {
  label: string;
  client: Client;
  upstream: Upstream;
  stream: boolean;
}

const CASES: Measured[] = [
  { label: 'chat→openai json', client: 'chat', upstream: 'openai', stream: false },
  { label: 'messages→anthropic json', client: 'messages', upstream: 'anthropic', stream: false },
  { label: 'chat→openai stream', client: 'chat', upstream: 'openai', stream: true },
  { label: 'chat→anthropic stream', client: 'chat', upstream: 'anthropic', stream: true },
];

const PATH: Record<Client, string> = { chat: '/v1/chat/completions', messages: '/v1/messages' };
const KEY = 'sk-sy-request-cpu-0000000000000000';

function headers(client: Client): Record<string, string> {
  return client === 'chat'
    ? { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }
    : { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
}

/**
 * Under callgrind: asks it to act on this process (`callgrind_control <args> <pid>`, through
 * vgdb, which reaches the process even while it waits in a system call: nothing spins meanwhile,
 * so the wait adds the same few instructions to every measurement).
 */
function callgrind(...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const control = spawn('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' });
    control.on('error', reject);
    control.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control ${args.join(' ')}: exit ${code}`))));
  });
}

/** The instructions counted since the last dump, from the dump callgrind writes now. */
async function dumpedInstructions(): Promise<number> {
  const before = new Set(readdirSync(CALLGRIND_DIR));
  await callgrind('--dump');
  const file = readdirSync(CALLGRIND_DIR).find((f) => f.startsWith(`cg.${process.pid}.`) && !before.has(f));
  const totals = file && /^totals:\s*(\d+)/m.exec(readFileSync(resolve(CALLGRIND_DIR, file), 'utf8'));
  if (!totals) throw new Error('callgrind wrote no dump');
  rmSync(resolve(CALLGRIND_DIR, file!));
  return Number(totals[1]);
}

/**
 * `n` requests over CONNECTIONS connections; what this process spent per request: CPU
 * milliseconds, or, under callgrind, thousands of instructions.
 */
async function costPerRequest(origin: string, path: string, hdrs: Record<string, string>, body: string, n: number, count: boolean): Promise<number> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  let left = n;
  const worker = async () => {
    while (left-- > 0) {
      const res = await pool.request({ method: 'POST', path, headers: hdrs, body });
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${await res.body.text()}`);
      await res.body.dump();
    }
  };
  // The connections are opened before the clock starts, and the heap is collected: a full
  // collection falling inside one measurement and not another was most of their differences.
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => (await pool.request({ method: 'POST', path, headers: hdrs, body })).body.dump()));
  (globalThis as { gc?: () => void }).gc?.();
  if (INSTRUCTIONS && count) {
    await callgrind('--instr=on');
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
    const counted = await dumpedInstructions();
    await callgrind('--instr=off');
    await pool.close();
    return counted / 1000 / n;
  }
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const used = process.cpuUsage(before);
  await pool.close();
  return (used.user + used.system) / 1000 / n;
}

/** What the gateway asks of the ledger on a completion, answered at once. */
function instantLedger() {
  const auth = { accountId: 'acct_request_cpu', keyId: 'key_request_cpu' };
  return {
    authenticate: async (key: string) => (key === KEY ? auth : undefined),
    holdLikelyPasses: () => true,
    placeHold: async () => undefined,
    settle: async (s: { charges: Array<{ cost: bigint }> }) => ({ captured: s.charges.reduce((a, c) => a + c.cost, 0n), settled: true }),
    release: async () => true,
    extendHold: async () => true,
    settled: async () => undefined,
    close: async () => undefined,
    ping: async () => undefined,
    onKeyChanged: () => () => undefined,
    forgetKey: () => undefined,
    reapExpired: async () => 0,
    // Stored Responses keep their statements; no measured case stores one.
    statements: { db: undefined },
  };
}

/** A measurement (`warmUp`: under callgrind, uncounted), or the end. */
type Command = { case: string; direct: boolean; requests: number; warmUp?: boolean } | { stop: true };

/** In a child: one build's gateway in this process, measuring what the parent asks, one command at a time. */
async function child(build: string, fakeUrl: string): Promise<void> {
  const { startGateway } = await import(pathToFileURL(resolve(build, 'src/app/start-gateway.js')).href);
  const config = resolve(RAW_DIR, `request-cpu-catalog-${process.pid}.yaml`);
  writeFileSync(config, catalogYaml(fakeUrl, 1000));
  const sink = () => pino.destination({ dest: '/dev/null', minLength: 32 * 1024, maxWrite: 64 * 1024, sync: false });
  const gw = await startGateway({ port: 0, configPath: config, ledger: instantLedger(), logLevel: 'info', logDestination: sink(), requestLogDestination: sink(), identity: undefined });
  process.on('message', (m: Command) => {
    if ('stop' in m) {
      rmSync(config, { force: true });
      void gw.close().then(() => process.exit(0));
      return;
    }
    const c = CASES.find((x) => x.label === m.case)!;
    const model = m.direct ? 'words:20' : c.upstream === 'openai' ? 'bench-openai' : 'bench-anthropic';
    costPerRequest(m.direct ? fakeUrl : gw.url, PATH[c.client], headers(c.client), requestBody(model, c.stream), m.requests, !m.warmUp).then(
      (ms) => process.send!(ms),
      (e) => {
        process.stderr.write(`request-cpu child failed: ${e instanceof Error ? e.stack : String(e)}\n`);
        process.exit(1);
      },
    );
  });
  process.send!('ready');
}

const children = new Set<ChildProcess>();

interface Runner {
  ask(c: Command): Promise<number>;
}

function startChild(build: string, fakeUrl: string, profile: boolean): Promise<Runner> {
  const prof = profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(RAW_DIR, 'prof')}`] : [];
  const node = [...process.execArgv, '--expose-gc', ...prof, ...(process.env.REQUEST_CPU_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  // Under callgrind, counting only when asked (callgrind_control): start-up and warm-up run uncounted.
  const under = INSTRUCTIONS
    ? { execPath: 'valgrind', execArgv: ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${CALLGRIND_DIR}/cg.%p`, process.execPath, ...node] }
    : { execArgv: node };
  const proc = fork(import.meta.filename, ['--child', build, fakeUrl], { ...under, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  let waiting: { resolve(v: unknown): void; reject(e: Error): void } | undefined;
  proc.on('message', (m) => waiting?.resolve(m));
  proc.on('exit', (code) => waiting?.reject(new Error(`${build}: child exited with ${code}`)));
  const next = () => new Promise<unknown>((resolve, reject) => (waiting = { resolve, reject }));
  const runner: Runner = {
    ask: (c) => {
      const answer = next();
      proc.send(c);
      return answer as Promise<number>;
    },
  };
  return next().then(() => runner);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const builds = (process.argv.length > 2 ? process.argv.slice(2) : ['dist']).map((d) => resolve(d));
  mkdirSync(CALLGRIND_DIR, { recursive: true });
  const { match } = await startNode('fake-upstream', ['--import', 'tsx', 'tools/fake-upstream/main.ts', '--port', '0', '--scenario', 'words:20'], {}, /listening on (http:\/\/[\d.]+:\d+)/);
  const fakeUrl = match[1];
  const runners: Runner[] = [];
  const unit = INSTRUCTIONS ? 'thousands of instructions' : 'CPU ms';
  const lines = [`gateway ${unit} per request, ledger left out: median over ${ROUNDS} turns of ${REQUESTS} requests at ${CONNECTIONS} connections, less the same client's CPU against the upstream directly`];
  builds.forEach((b, i) => lines.push(`  [${i}] ${b}`));
  try {
    for (const [i, b] of builds.entries()) runners.push(await startChild(b, fakeUrl, process.env.REQUEST_CPU_PROF === String(i)));
    const only = process.env.REQUEST_CPU_CASES?.split(',').map((x) => x.trim());
    for (const { label } of CASES.filter((c) => !only || only.some((o) => c.label.includes(o)))) {
      for (const r of runners) await r.ask({ case: label, direct: false, requests: WARMUP, warmUp: true });
      const own = builds.map(() => [] as number[]);
      const direct: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = builds.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) own[i].push(await runners[i].ask({ case: label, direct: false, requests: REQUESTS }));
        direct.push(await runners[order[0]].ask({ case: label, direct: true, requests: REQUESTS }));
        process.stderr.write(`  ${label} turn ${round + 1}: ${own.map((xs, i) => `[${i}] ${xs.at(-1)!.toFixed(3)}`).join(' ')}, client ${direct.at(-1)!.toFixed(3)} (in [${order[0]}])\n`);
      }
      const client = median(direct);
      const base = median(own[0]) - client;
      const cells = own.map((xs, i) => {
        const m = median(xs) - client;
        const delta = i === 0 ? '' : ` (${m >= base ? '+' : ''}${((100 * (m - base)) / base).toFixed(1)}%)`;
        const digits = INSTRUCTIONS ? 0 : 3;
        return `[${i}] ${m.toFixed(digits)}${delta} {${xs.map((x) => (x - client).toFixed(digits)).join(' ')}}`;
      });
      const line = `${label}: ${cells.join('  ')}  (client ${client.toFixed(INSTRUCTIONS ? 0 : 3)})`;
      process.stderr.write(line + '\n');
      lines.push(line);
    }
    await Promise.all(runners.map((r) => r.ask({ stop: true }).catch(() => undefined)));
  } finally {
    for (const proc of children) proc.kill();
    await stopAll();
  }
  process.stdout.write(lines.join('\n') + '\n');
}

if (process.argv[2] === '--child') {
  child(process.argv[3], process.argv[4]).catch((e) => {
    process.stderr.write(`request-cpu child failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
} else {
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  main().catch((e) => {
    process.stderr.write(`request-cpu failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  });
}
