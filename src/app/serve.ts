import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkIdentityModels, type IdentityConfig } from '../config/identity.js';
import { loadConfigFile, loadIdentityConfig } from '../config/load-config.js';
import { startGateway, type Gateway } from './start-gateway.js';
import { loadTelemetry } from '../telemetry/load-telemetry.js';
import { dataDirFromEnv, DEFAULT_STATEMENT_TIMEOUT_MS, ledgerOptionsFromEnv, type Ledger } from '../ledger/index.js';
import type { UsageWebhookSettings } from '../export/usage-webhook.js';
import { demoBanner, HeldOutput, type DemoDetails } from './demo-banner.js';

/** Demo balance: $10 in nanodollars. */
const DEMO_BALANCE = 10_000_000_000n;

export interface ServeOptions {
  /** Ensure a demo account and print a fresh key and ready-to-paste requests. */
  demo: boolean;
}

/** How long a drain lets requests in flight finish: the usual orchestrator grace period (Kubernetes: 30 s). */
const DEFAULT_DRAIN_MS = 30_000;

/** Node runs a longer timer after 1 ms: such a setting would quietly mean its opposite. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A whole number from the environment within [min, max], undefined when unset; else the start fails naming it. */
function envInteger(name: string, min: number, max: number): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const v = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!(v >= min && v <= max)) throw new Error(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return v;
}

/** Beyond the statement timeout, what a usage record's statement may take to commit, by default (see ledger/usage-export.ts). */
const USAGE_WEBHOOK_DELAY_BEYOND_TIMEOUT_MS = 10_000;

/**
 * The usage webhook, on when SWITCHYARD_USAGE_WEBHOOK_URL is set: its signing secret, the delay
 * before a record is sent (longer than the statement timeout: the cursor rule needs it), the
 * records per POST and how long a claim on the export outlives its instance.
 */
function usageWebhookFromEnv(statementTimeoutMs: number): UsageWebhookSettings | undefined {
  const url = process.env.SWITCHYARD_USAGE_WEBHOOK_URL;
  if (!url) return undefined;
  const marginMs = envInteger('SWITCHYARD_USAGE_WEBHOOK_DELAY_MS', 1, MAX_TIMER_MS) ?? statementTimeoutMs + USAGE_WEBHOOK_DELAY_BEYOND_TIMEOUT_MS;
  if (marginMs <= statementTimeoutMs) {
    throw new Error(`SWITCHYARD_USAGE_WEBHOOK_DELAY_MS (${marginMs}) must be longer than the database statement timeout (${statementTimeoutMs} ms): records younger than that may not all be visible yet`);
  }
  return {
    url,
    secret: process.env.SWITCHYARD_USAGE_WEBHOOK_SECRET || undefined,
    marginMs,
    batchSize: envInteger('SWITCHYARD_USAGE_WEBHOOK_BATCH', 1, 1_000),
    claimMs: envInteger('SWITCHYARD_USAGE_WEBHOOK_CLAIM_MS', 300, MAX_TIMER_MS),
  };
}

/** `switchyard serve`: start on the environment's settings; SIGINT/SIGTERM drain, then stop. */
export async function serve(opts: ServeOptions): Promise<Gateway> {
  const db = ledgerOptionsFromEnv();
  const statementTimeoutMs = envInteger('SWITCHYARD_DB_STATEMENT_TIMEOUT_MS', 1, MAX_TIMER_MS);
  // The demo's banner is what a person reads first: the log lines of the start wait behind it.
  const held = opts.demo ? new HeldOutput(process.stdout) : undefined;
  const gateway = await startGateway({
    logDestination: held,
    host: process.env.HOST ?? '127.0.0.1',
    port: envInteger('PORT', 0, 65_535) ?? 8080,
    configPath: process.env.SWITCHYARD_CONFIG || undefined,
    databaseUrl: db.databaseUrl,
    dbSchema: db.schema,
    dataDir: db.dataDir,
    embedded: db.embedded,
    spoolPath: db.spoolPath,
    leases: db.leases,
    adminKey: process.env.SWITCHYARD_ADMIN_KEY || undefined,
    redisUrl: process.env.REDIS_URL || undefined,
    holdTtlMs: envInteger('SWITCHYARD_HOLD_TTL_MS', 1, MAX_TIMER_MS),
    reaperIntervalMs: envInteger('SWITCHYARD_REAPER_INTERVAL_MS', 1, MAX_TIMER_MS),
    sendTimeoutMs: envInteger('SWITCHYARD_SEND_TIMEOUT_MS', 1, MAX_TIMER_MS),
    bodyBudgetBytes: envInteger('SWITCHYARD_BODY_BUDGET_BYTES', 1, Number.MAX_SAFE_INTEGER),
    bodyArrival: {
      minBytesPerSecond: envInteger('SWITCHYARD_BODY_MIN_BYTES_PER_S', 0, Number.MAX_SAFE_INTEGER),
      timeoutMs: envInteger('SWITCHYARD_BODY_TIMEOUT_MS', 1, MAX_TIMER_MS),
    },
    metricsToken: process.env.SWITCHYARD_METRICS_TOKEN || undefined,
    dbConnectTimeoutMs: envInteger('SWITCHYARD_DB_CONNECT_TIMEOUT_MS', 1, MAX_TIMER_MS),
    dbStatementTimeoutMs: statementTimeoutMs,
    usageWebhook: usageWebhookFromEnv(statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS),
    // OpenTelemetry, from the standard OTEL_* variables only (off, and never loaded, when none is set).
    telemetry: (o) => loadTelemetry(process.env, o),
  }).catch((err: unknown) => {
    // A start that failed shows its log lines at once, above the error.
    held?.release();
    throw err;
  });
  const drainMs = envInteger('SWITCHYARD_DRAIN_MS', 0, MAX_TIMER_MS) ?? DEFAULT_DRAIN_MS;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    gateway.log.info({ signal, drainMs, inFlight: gateway.lifecycle.inFlight }, 'draining');
    try {
      await gateway.close(drainMs);
      gateway.log.info({ signal }, 'stopped');
      process.exit(0);
    } catch (err) {
      gateway.log.error({ err }, 'stopping failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGHUP', () => reloadConfig(gateway, process.env.SWITCHYARD_CONFIG || undefined));
  gateway.log.info({ url: gateway.url, models: [...gateway.catalog.models.keys()] }, 'switchyard is listening');
  if (opts.demo) {
    try {
      process.stdout.write(demoBanner(await demoDetails(gateway)));
    } finally {
      held?.release();
    }
  }
  return gateway;
}

/**
 * SIGHUP: reads the config file again: the catalog and the identity provider's settings (its
 * `oidc:` section, the SWITCHYARD_OIDC_* variables still winning). A valid file serves new requests
 * from now on (requests in flight keep what they started with); an invalid one, in either part, is
 * logged and everything running kept.
 */
function reloadConfig(gateway: Gateway, configPath: string | undefined): void {
  if (!configPath) return gateway.log.warn({}, 'SIGHUP: no SWITCHYARD_CONFIG to reload; the built-in catalog stays');
  try {
    const catalog = loadConfigFile(configPath);
    const identity = loadIdentityConfig(configPath);
    if (identity) checkIdentityModels(identity, catalog);
    const before = { models: [...gateway.catalog.models.keys()], oidc: identitySummary(gateway.identity) };
    gateway.replaceCatalog(catalog);
    const oidcChanged = gateway.replaceIdentity(identity);
    const after = { models: [...catalog.models.keys()], oidc: identitySummary(identity) };
    void gateway.ledger
      .audit({ actor: { kind: 'system', name: 'SIGHUP' }, action: 'config.reload', targetType: 'config', targetId: configPath, before, after })
      .catch((err) => gateway.log.warn({ err }, 'SIGHUP: the reload could not be written to the audit log'));
    gateway.log.info({ config: configPath, models: after.models, oidc: identity ? (oidcChanged ? 'reloaded' : 'unchanged') : 'off' }, 'SIGHUP: configuration reloaded');
  } catch (err) {
    gateway.log.error({ config: configPath, error: (err as Error).message }, 'SIGHUP: the new configuration is invalid; the running one is kept');
  }
}

/** What the audit log records of the identity settings: who issues, for whom, and the groups with policies (no secret). */
function identitySummary(identity: IdentityConfig | undefined) {
  if (!identity) return null;
  return { issuer: identity.issuer, audience: identity.audience, groups: Object.keys(identity.groups), admin_groups: identity.adminGroups, console: identity.console?.clientId ?? null };
}

/** Reuses the demo account (found by its key named "demo") and its key, or creates them. */
async function demoDetails(gateway: Gateway): Promise<DemoDetails> {
  const { ledger, url } = gateway;
  const { key, accountId } = await demoKey(ledger, join(dataDirFromEnv(), 'demo-key'));
  const account = await ledger.getAccount(accountId);
  if (!account) throw new Error('the demo account is missing');
  const has = (id: string) => gateway.catalog.models.has(id);
  const first = [...gateway.catalog.models.keys()][0] ?? 'local-sonnet';
  return {
    url,
    key,
    accountId: account.id,
    balance: account.available,
    adminKey: Boolean(process.env.SWITCHYARD_ADMIN_KEY),
    model: has('local-sonnet') ? 'local-sonnet' : first,
    smallModel: has('local-haiku') ? 'local-haiku' : first,
  };
}

/**
 * The demo key: a key is stored only as its hash, so the one printed last time is kept in the
 * data directory (readable by its owner only) and printed again while the ledger still accepts
 * it. Otherwise (first start, another database, revoked) a new one is minted for the demo account.
 */
async function demoKey(ledger: Ledger, file: string): Promise<{ key: string; accountId: string }> {
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  const auth = saved ? await ledger.authenticate(saved) : undefined;
  if (auth) return { key: saved, accountId: auth.accountId };
  const existing = (await ledger.listKeys()).find((k) => k.name === 'demo');
  const account = existing ? await ledger.getAccount(existing.accountId) : await ledger.createAccount('demo', DEMO_BALANCE);
  if (!account) throw new Error('the demo account is missing');
  const { key } = await ledger.createKey(account.id, { name: 'demo' });
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return { key, accountId: account.id };
}
