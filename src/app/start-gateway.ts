import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { loadCatalog } from '../config/default-catalog.js';
import { loadIdentityConfig } from '../config/load-config.js';
import { checkIdentityModels, type IdentityConfig } from '../config/identity.js';
import { IdentityInUse } from '../http/identity/identity-in-use.js';
import { DEFAULT_BODY_ARRIVAL, type BodyArrival } from '../http/body-arrival.js';
import { createApp, type Readiness } from '../http/app.js';
import { answerClientError } from '../http/client-error.js';
import { Lifecycle } from '../http/lifecycle.js';
import { GatewayError } from '../ir/index.js';
import { ApiDocument } from '../http/openapi-document.js';
import { DEFAULT_HOLD_TTL_MS, openLedger, type EmbeddedDatabase, type Ledger, type LedgerOptions } from '../ledger/index.js';
import { startReaper } from '../ledger/reaper.js';
import { UsageExportCursor } from '../ledger/index.js';
import { checkUsageWebhookSettings, UsageWebhook, type UsageWebhookSettings } from '../export/usage-webhook.js';
import { openRateLimiter, type RateLimiter } from '../limits/index.js';
import { localKeyEvents, redisKeyEvents } from './key-events.js';
import { providers as builtInProviders } from '../providers/registry.js';
import type { ProviderRegistry } from '../providers/types.js';
import type { PipelineDeps } from '../pipeline/types.js';
import type { Catalog } from '../routing/catalog.js';
import { catalogPolicy, openDeploymentHealth, type DeploymentHealth } from '../routing/health/index.js';
import { createScrubber, logRedaction, type Scrubber } from '../util/redact.js';
import type { Telemetry, TelemetryOptions } from '../telemetry/types.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

export interface GatewayOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Catalog YAML; the built-in local catalog when absent. */
  configPath?: string;
  catalog?: Catalog;
  databaseUrl?: string;
  /** PostgreSQL only: run in this schema (created if missing), e.g. a dedicated benchmark schema. */
  dbSchema?: string;
  dataDir?: string;
  /** Which embedded database serves dataDir (see ledger/data-dir.ts). */
  embedded?: EmbeddedDatabase;
  /** PostgreSQL only: connection (and wait for a pooled one) timeout, statement timeout. */
  dbConnectTimeoutMs?: number;
  dbStatementTimeoutMs?: number;
  /** Balance leases (ledger/leases.ts): on unless false. */
  leases?: LedgerOptions['leases'];
  /** Where settles the database did not take by shutdown are kept for the next start. */
  spoolPath?: string;
  /** An already open ledger (tests share one PGlite per file). */
  ledger?: Ledger;
  adminKey?: string;
  holdTtlMs?: number;
  reaperIntervalMs?: number;
  bodyLimitBytes?: number;
  /** Bytes of request bodies read at once, all requests together. */
  bodyBudgetBytes?: number;
  bodyBudgetWaitMs?: number;
  /** A body slower than `minBytesPerSecond` after `graceMs`, or not whole after `timeoutMs`, is a 408 (http/body-arrival.ts). */
  bodyArrival?: Partial<BodyArrival>;
  /** A streaming client that reads nothing for this long is cut off (default 60 s). */
  sendTimeoutMs?: number;
  logLevel?: string;
  /** Where log lines other than the request log go (stdout when absent): `serve --demo` holds them until its banner is out. */
  logDestination?: DestinationStream;
  /** Where key rate limits are kept: Redis (shared by instances) when set, else this process. */
  redisUrl?: string;
  /** Bearer token GET /metrics requires (open when unset). */
  metricsToken?: string;
  /** An already open limiter (tests that give several gateways one Redis prefix). */
  limiter?: RateLimiter;
  /** An already open deployment-health store (tests that give several gateways one Redis prefix). */
  health?: DeploymentHealth;
  /** The providers the config may name; the built-in ones by default (registry.ts `withProviders` adds more). */
  providers?: ProviderRegistry;
  /** Randomness for picking deployments by weight (Math.random by default; tests seed one). */
  random?: () => number;
  /**
   * Sign-in with an identity provider; when the option is absent, the config file's `oidc:`
   * section and the SWITCHYARD_OIDC_* variables (none: API keys only).
   */
  identity?: IdentityConfig;
  /** Where the request log goes (stdout in blocks when absent; tests that read it give a stream). */
  requestLogDestination?: DestinationStream;
  /**
   * Starts the OpenTelemetry export (`telemetry/load-telemetry.ts`: from the OTEL_* variables);
   * none when absent or when it answers undefined. The gateway shuts it down when it closes.
   */
  telemetry?: (opts: TelemetryOptions) => Promise<Telemetry | undefined>;
  /** Delivers every usage record to this webhook, at least once (export/usage-webhook.ts); off when absent. */
  usageWebhook?: UsageWebhookSettings;
}

export interface Gateway {
  url: string;
  server: Server;
  ledger: Ledger;
  catalog: Catalog;
  log: PinoLogger;
  /** What removes credentials from the log lines; telemetry filters its attributes with it too (util/redact.ts). */
  scrubber: Scrubber;
  /** Requests in flight, and whether a drain has begun (readiness). */
  lifecycle: Lifecycle;
  /** New requests use this catalog from now on (SIGHUP); requests in flight keep theirs. */
  replaceCatalog(catalog: Catalog): void;
  /** The identity provider's settings in use (undefined: API keys only). */
  identity: IdentityConfig | undefined;
  /**
   * New requests and console sign-ins use these identity-provider settings from now on (SIGHUP;
   * undefined: API keys only); false when they equal the running ones, which are then kept.
   */
  replaceIdentity(identity: IdentityConfig | undefined): boolean;
  /**
   * Drains and stops: stops accepting connections, lets requests in flight finish for up to
   * `graceMs` (0 by default: tests stop at once), then ends the rest as an upstream failure
   * would (an error in their protocol, their upstream cancelled, what they produced billed),
   * and closes the ledger once every settle has committed.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * The request log (one line per request) is written to stdout in blocks of this many bytes, or of
 * what came in the last REQUEST_LOG_FLUSH_MS, rather than one write per line: each write is handed
 * to a libuv thread, and at low concurrency that was a thread woken and a wake-up of the event
 * loop per request (DECISIONS.md, "Request log"). Other log lines are written at once.
 */
const REQUEST_LOG_BUFFER_BYTES = 32 * 1024;
/** One write of the request log carries at most this much (sonic-boom's default is 16 KiB, below the block). */
const REQUEST_LOG_MAX_WRITE_BYTES = 64 * 1024;
const REQUEST_LOG_FLUSH_MS = 1000;
/** Readiness waits this long for the database's answer: as long as a request would. */
const READY_DB_TIMEOUT_MS = 1_000;
/** Once the in-flight requests are told to end, how long they get to write their error and settle. */
const END_IN_FLIGHT_MS = 5_000;
/** After the connections are closed, how long the requests get to unwind (their settles are submitted then). */
const UNWIND_MS = 5_000;

/** Everything `make run` and the tests start: catalog, ledger, reaper, document, HTTP server. */
export async function startGateway(opts: GatewayOptions = {}): Promise<Gateway> {
  const level = opts.logLevel ?? process.env.LOG_LEVEL ?? 'info';
  const providers = opts.providers ?? builtInProviders;
  const catalog = opts.catalog ?? loadCatalog(opts.configPath, { providers });
  // Every line and telemetry record goes through one scrubber: the secrets this gateway knows
  // (provider keys of the catalog in use, the admin key, the metrics token) and every credential shape.
  let catalogInUse = catalog;
  const scrubber = createScrubber(knownSecrets(opts, () => catalogInUse));
  const log = opts.logDestination ? pino({ level, ...logRedaction(scrubber) }, opts.logDestination) : pino({ level, ...logRedaction(scrubber) });
  // pino flushes what is buffered when the process exits; a kill -9 loses at most the last second.
  const requestLog =
    level === 'silent'
      ? log
      : pino(
          { level, ...logRedaction(scrubber) },
          opts.requestLogDestination ?? pino.destination({ dest: 1, minLength: REQUEST_LOG_BUFFER_BYTES, maxWrite: REQUEST_LOG_MAX_WRITE_BYTES, periodicFlush: REQUEST_LOG_FLUSH_MS }),
        );
  if (opts.usageWebhook) checkUsageWebhookSettings(opts.usageWebhook);
  const identity = 'identity' in opts ? opts.identity : loadIdentityConfig(opts.configPath);
  if (identity) checkIdentityModels(identity, catalog);
  const ownsLedger = !opts.ledger;
  const ledger = opts.ledger ?? (await openLedger({
      databaseUrl: opts.databaseUrl,
      schema: opts.dbSchema,
      dataDir: opts.dataDir,
      embedded: opts.embedded,
      connectTimeoutMs: opts.dbConnectTimeoutMs,
      statementTimeoutMs: opts.dbStatementTimeoutMs,
      spoolPath: opts.spoolPath,
      leases: opts.leases,
      log,
    }));
  const ownsLimiter = !opts.limiter;
  const limiter = opts.limiter ?? (await openRateLimiter({ redisUrl: opts.redisUrl, log }));
  // Cooldowns shared by every instance through Redis when configured, else this process's own.
  const ownsHealth = !opts.health;
  // Each deployment's cooldown is its model's in the catalog in use (a reload applies at once).
  const health: DeploymentHealth = opts.health ?? (await openDeploymentHealth({ redisUrl: opts.redisUrl, log, policyFor: catalogPolicy(() => pipeline.catalog) }));
  // Keys revoked or changed here are dropped from the other instances' key caches at once.
  const keyEvents = opts.redisUrl
    ? await redisKeyEvents(opts.redisUrl, (keyId) => ledger.forgetKey(keyId), (err) => log.warn({ err }, 'could not announce a key change'))
    : localKeyEvents;
  const stopAnnouncing = ledger.onKeyChanged((keyId) => keyEvents.changed(keyId));
  const holdTtlMs = opts.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
  const stopReaper = startReaper(ledger, opts.reaperIntervalMs ?? 30_000, log);
  const api = await ApiDocument.load();
  // Its spans and records go through the log's scrubber: no credential reaches them either.
  const telemetry = await opts.telemetry?.({ scrubber });
  const lifecycle = new Lifecycle();
  const pipeline: PipelineDeps = { catalog, ledger, limiter, providers, holdTtlMs, health, log, now: Date.now, random: opts.random };
  const readiness = async (): Promise<Readiness> => {
    const checks: Record<string, string> = { draining: String(lifecycle.draining) };
    const database = await Promise.race([
      ledger.ping().then(() => 'ok', (e: Error) => `unreachable: ${e.message}`),
      new Promise<string>((r) => setTimeout(() => r('no answer within 1 s'), READY_DB_TIMEOUT_MS).unref()),
    ]);
    checks.database = database;
    if (opts.redisUrl) checks.redis = limiter.available() ? 'ok' : 'disconnected';
    return { ready: !lifecycle.draining && database === 'ok' && checks.redis !== 'disconnected', checks };
  };
  const identityInUse = new IdentityInUse(identity, () => pipeline.catalog);
  const app = createApp({
    lifecycle,
    readiness,
    metricsToken: opts.metricsToken,
    api,
    document: api.definition,
    ledger,
    adminKey: opts.adminKey,
    bodyLimitBytes: opts.bodyLimitBytes ?? 32 * 1024 * 1024,
    bodyBudgetBytes: opts.bodyBudgetBytes,
    bodyBudgetWaitMs: opts.bodyBudgetWaitMs,
    bodyArrival: {
      minBytesPerSecond: opts.bodyArrival?.minBytesPerSecond ?? DEFAULT_BODY_ARRIVAL.minBytesPerSecond,
      timeoutMs: opts.bodyArrival?.timeoutMs ?? DEFAULT_BODY_ARRIVAL.timeoutMs,
      graceMs: opts.bodyArrival?.graceMs ?? DEFAULT_BODY_ARRIVAL.graceMs,
    },
    sendTimeoutMs: opts.sendTimeoutMs,
    log,
    requestLog,
    pipeline,
    identity: identityInUse,
    telemetry,
  });
  // Read from the ledger, off every request's path; one instance of those sharing a database delivers at a time.
  const usageWebhook = opts.usageWebhook && new UsageWebhook({ ...opts.usageWebhook, cursor: new UsageExportCursor(ledger.statements, 'webhook', exporterId()), log });
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  // Node keeps the first 2,000 headers and drops the rest without a word, so a request with more
  // lost its content-length and was refused for the wrong reason. The size limit (16 KiB,
  // answered 431 by answerClientError) is what bounds headers.
  server.maxHeadersCount = 0;
  server.on('clientError', answerClientError);
  // What the gateway holds besides the server; a failed listen gives it back too.
  const release = async () => {
    stopReaper();
    stopAnnouncing();
    // What it had not delivered is read again by the next holder of the export.
    await usageWebhook?.stop();
    await Promise.all([keyEvents.close(), ownsLimiter ? limiter.close() : undefined, ownsHealth ? health.close() : undefined]);
    // Waits for every submitted settle before closing the connections.
    if (ownsLedger) await ledger.close();
    else await ledger.settled();
    if (requestLog !== log) requestLog.flush();
    // After the settles: their spans and usage records are exported with the rest.
    await telemetry?.shutdown().catch((err) => log.warn({ err }, 'telemetry: the last export failed'));
  };
  try {
    await listen(server, opts.port ?? 8080, opts.host ?? '127.0.0.1');
  } catch (e) {
    await release();
    throw e;
  }
  if (usageWebhook) {
    usageWebhook.start();
    log.info({ to: new URL(opts.usageWebhook!.url).origin, signed: opts.usageWebhook!.secret !== undefined, delayMs: opts.usageWebhook!.marginMs }, 'usage webhook: on');
  }
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  let closing: Promise<void> | undefined;
  const drainAndClose = async (graceMs: number) => {
    lifecycle.draining = true;
    stopReaper();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const inFlight = lifecycle.inFlight;
    if (inFlight > 0) log.info({ inFlight, graceMs }, 'draining: waiting for requests in flight');
    if (!(await lifecycle.idle(graceMs))) {
      log.warn({ inFlight: lifecycle.inFlight }, 'drain deadline: ending the requests still in flight');
      lifecycle.endInFlight(new GatewayError('unavailable', 'the gateway is shutting down; the request was ended', { retryAfter: 1 }));
      await lifecycle.idle(END_IN_FLIGHT_MS);
    }
    server.closeAllConnections();
    await closed;
    // Requests cut with their connection unwind now; each submits its settle as it does.
    await lifecycle.idle(UNWIND_MS);
    await release();
  };
  const gateway: Gateway = {
    url: `http://${host}:${port}`,
    server,
    ledger,
    catalog,
    log,
    scrubber,
    lifecycle,
    replaceCatalog(next) {
      pipeline.catalog = next;
      catalogInUse = next;
      gateway.catalog = next;
    },
    identity,
    replaceIdentity(next) {
      if (next) checkIdentityModels(next, gateway.catalog);
      if (!identityInUse.replace(next)) return false;
      gateway.identity = next;
      return true;
    },
    close: (graceMs = 0) => (closing ??= drainAndClose(graceMs)),
  };
  return gateway;
}

/**
 * What the logs must never carry verbatim: the catalog's provider keys (asked again when the
 * catalog is replaced), the admin key, the metrics token, and AWS credentials from the environment.
 * The same array comes back while the catalog is the same one, so the scrubber rebuilds only then.
 */
function knownSecrets(opts: GatewayOptions, catalog: () => Catalog): () => ReadonlyArray<string | undefined> {
  let seen: Catalog | undefined;
  let list: Array<string | undefined> = [];
  return () => {
    const current = catalog();
    if (current !== seen) {
      seen = current;
      list = [opts.adminKey, opts.metricsToken, opts.usageWebhook?.secret, process.env.AWS_SECRET_ACCESS_KEY, process.env.AWS_SESSION_TOKEN, ...[...current.providers.values()].map((p) => p.apiKey)];
    }
    return list;
  };
}

/** This process, as the usage export's claim names it: unique among the instances sharing a database. */
function exporterId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

/** Listening, or an error that says which address and what to do (a busy port is an operator's everyday mistake, not a crash). */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (err.code === 'EADDRINUSE') reject(new Error(`cannot listen on ${where}: the port is in use by another process (set PORT to a free one)`));
      else if (err.code === 'EACCES') reject(new Error(`cannot listen on ${where}: permission denied (ports below 1024 need privileges; set PORT)`));
      else if (err.code === 'EADDRNOTAVAIL') reject(new Error(`cannot listen on ${where}: no such address on this machine (set HOST)`));
      else reject(new Error(`cannot listen on ${where}: ${err.message}`));
    };
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
}
