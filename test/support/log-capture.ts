/**
 * Every log line a gateway writes during a test run, kept for the run's credential scan
 * (log-scan-setup.ts, which names the folder in SWITCHYARD_TEST_LOG_DIR). Outside such a run (a
 * suite started without the global setup) nothing is captured and in-process gateways stay silent.
 *
 * - In-process gateways (startTestGateway and the tests that call startGateway themselves) log at
 *   debug into one file per vitest worker, through the production logger's own redaction.
 * - Spawned gateways and CLI runs keep their stdout and stderr for the test; a copy of what is a log
 *   (stdout's JSON lines that have a level and a time, all of stderr) goes to one file per child.
 *   What a command prints as its answer (a created key, the demo's banner with its key) is output a
 *   person asked for, not a log line, and is left out.
 * - The credentials a test gives a gateway (admin key, provider keys, metrics token, a child's
 *   credential-named environment) are registered so the scan looks for their exact values too; keys
 *   the ledger mints have a shape (sk-sy-…) the scan finds without a list.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { DestinationStream } from 'pino';

/** The environment variable naming the run's capture folder. */
export const LOG_DIR_ENV = 'SWITCHYARD_TEST_LOG_DIR';
/** In a capture folder: the registered credentials of one worker (one JSON object a line). */
export const SECRETS_FILE_PREFIX = 'secrets-';
/** In a capture folder: one line per gateway a helper started, so the scan can tell it saw them. */
export const STARTS_FILE_PREFIX = 'starts-';
/** The line a helper writes through each in-process gateway's logger once it is up. */
export const STARTED_MESSAGE = 'test gateway logging to the capture';

export type SecretKind = 'provider key' | 'client key' | 'admin key' | 'metrics token' | 'credential';

const dir = (): string | undefined => process.env[LOG_DIR_ENV] || undefined;

let workerFd: number | undefined;
let secretsFd: number | undefined;
let startsFd: number | undefined;
const registered = new Set<string>();

function appendTo(fd: number, text: string): void {
  writeSync(fd, text);
}

/**
 * Synchronous appends: a worker that ends (or a test that fails) loses no line, and a line is
 * always written whole. Tests only: the gateway's own stdout destination is asynchronous.
 */
function workerLog(): number {
  workerFd ??= openSync(join(dir()!, `in-process-${process.pid}.log`), 'a');
  return workerFd;
}

const workerDestination: DestinationStream = { write: (line: string) => appendTo(workerLog(), line) };

/**
 * The logger options for an in-process gateway: its lines (request log included) into this worker's
 * capture file at debug, or silence when no capture runs.
 */
export function capturedLogOptions(): { logLevel: string; logDestination?: DestinationStream; requestLogDestination?: DestinationStream } {
  if (!dir()) return { logLevel: 'silent' };
  return { logLevel: 'debug', logDestination: workerDestination, requestLogDestination: workerDestination };
}

/** A line to this worker's capture file (what a test's own sink received, say). */
export function captureLine(line: string): void {
  if (!dir()) return;
  appendTo(workerLog(), line.endsWith('\n') ? line : `${line}\n`);
}

/** Records that a helper started a gateway whose logger writes to the capture (the scan checks it saw each). */
export function recordGatewayStart(log: { info(obj: object, msg: string): void }, label: string): void {
  if (!dir()) return;
  startsFd ??= openSync(join(dir()!, `${STARTS_FILE_PREFIX}${process.pid}.log`), 'a');
  appendTo(startsFd, `${JSON.stringify({ label })}\n`);
  log.info({ label }, STARTED_MESSAGE);
}

/** Registers credentials the scan must not find (values shorter than 8 characters are not credentials). */
export function registerSecrets(kind: SecretKind, values: Iterable<string | undefined | null>): void {
  if (!dir()) return;
  for (const value of values) {
    if (typeof value !== 'string' || value.length < 8 || registered.has(value)) continue;
    registered.add(value);
    secretsFd ??= openSync(join(dir()!, `${SECRETS_FILE_PREFIX}${process.pid}.jsonl`), 'a', 0o600);
    appendTo(secretsFd, `${JSON.stringify({ kind, value })}\n`);
  }
}

/** Environment variables whose value is a credential, by name. */
const CREDENTIAL_ENV = /(?:KEY|TOKEN|SECRET|PASSWORD)$/i;

/** The credentials in a child's environment, registered by what their name says they are. */
export function registerEnvSecrets(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (!CREDENTIAL_ENV.test(name) || !value) continue;
    registerSecrets(/ADMIN/i.test(name) ? 'admin key' : /METRICS/i.test(name) ? 'metrics token' : /API_KEY|FAKE_KEY/i.test(name) ? 'provider key' : 'credential', [value]);
  }
}

/** A stdout line the scan reads: a pino line (JSON with a level and a time). */
function isLogLine(line: string): boolean {
  return line.startsWith('{') && line.includes('"level":') && line.includes('"time":');
}

let children = 0;

/**
 * Copies a spawned gateway's or CLI run's log into the capture: stdout's log lines and all of
 * stderr, one file per child named after `label`. The child's streams are read as before (another
 * 'data' listener), and `env`'s credentials are registered (give only what the test adds to the
 * environment: the scan needs the test's credentials, not the machine's).
 */
export function captureChildLog(
  child: ChildProcess,
  label: string,
  env?: Record<string, string | undefined>,
  /** 'log-lines': of stderr too only the log lines (a shell script's stderr carries other programs' output). */
  stderr: 'all' | 'log-lines' = 'all',
): void {
  if (!dir()) return;
  if (env) registerEnvSecrets(env);
  const file = join(dir()!, `${label}-${process.pid}-${++children}.log`);
  let fd: number | undefined;
  const write = (text: string) => {
    fd ??= openSync(file, 'a');
    appendTo(fd, text);
  };
  const follow = (stream: NodeJS.ReadableStream | null, keep: (line: string) => boolean) => {
    let partial = '';
    stream?.on('data', (d: Buffer | string) => {
      const lines = (partial + String(d)).split('\n');
      partial = lines.pop()!;
      const kept = lines.filter(keep);
      if (kept.length) write(`${kept.join('\n')}\n`);
    });
    stream?.on('end', () => {
      if (partial && keep(partial)) write(`${partial}\n`);
      partial = '';
    });
  };
  follow(child.stdout, isLogLine);
  follow(child.stderr, stderr === 'all' ? (line) => line.trim() !== '' : isLogLine);
  child.once('close', () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  });
}

/**
 * What a test helper calls once an in-process gateway is up: its credentials (admin key, metrics
 * token, the catalog's provider keys) are registered and its start is written through its own
 * logger, so the scan can tell that it saw this gateway's lines.
 */
export function captureGateway(
  gateway: { log: { info(obj: object, msg: string): void }; catalog: { providers: Map<string, { apiKey?: string }> } },
  opts: { adminKey?: string; metricsToken?: string },
  label: string,
): void {
  if (!dir()) return;
  registerSecrets('admin key', [opts.adminKey]);
  registerSecrets('metrics token', [opts.metricsToken]);
  registerSecrets('provider key', [...gateway.catalog.providers.values()].map((p) => p.apiKey));
  recordGatewayStart(gateway.log, label);
}
