import { startGateway, type Gateway, type GatewayOptions } from '../../src/app/start-gateway.js';
import type { Ledger } from '../../src/ledger/index.js';
import { defaultCatalog } from '../../src/config/default-catalog.js';
import type { Catalog, Price } from '../../src/routing/catalog.js';
import { closeAgents } from '../../src/providers/transport/index.js';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../../tools/fake-upstream/index.js';
import { dbTargets, type DbTarget, type OpenedTarget } from '../ledger/db-targets.js';
import { captureGateway, capturedLogOptions } from './log-capture.js';

export const ADMIN_KEY = 'sk-admin-test';

/** A running gateway on a fresh database, with one funded account and its key. */
export interface TestGateway {
  url: string;
  gateway: Gateway;
  ledger: Ledger;
  db: OpenedTarget;
  accountId: string;
  key: string;
  adminKey: string;
  /** Another funded account with its own key. */
  newAccount(balance?: bigint, name?: string): Promise<{ accountId: string; key: string }>;
  /** A request to the admin API with the admin key (a JSON body when given). */
  admin(path: string, method?: string, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

export interface TestGatewayOptions extends Omit<GatewayOptions, 'ledger' | 'port' | 'adminKey'> {
  /** Starting balance of the default account (nanodollars); $100 by default. */
  balance?: bigint;
  /** Which database (PGlite when absent). */
  target?: DbTarget;
  /** Balance leases off: every hold is placed in the database (for suites that read the holds table). */
  exactHolds?: boolean;
  /**
   * Output tokens per second for every built-in local model (0 = no pacing, the default here so
   * suites stay fast; tests of disconnects and pacing set a rate).
   */
  localRate?: number;
}

/** The built-in catalog with every local model paced at `rate` tokens per second, whole answers too. */
export function localCatalog(rate: number) {
  const catalog = defaultCatalog();
  for (const m of catalog.models.values()) {
    m.modelOptions = { ...m.modelOptions, tokens_per_second: rate, pace_whole_answers: rate > 0 };
  }
  return catalog;
}

/** $1 per million tokens in the price model's unit (femtodollars per token). */
export const M = 1_000_000_000n;

/** Sets a catalog model's price: its list price and every deployment's, which billing uses. */
export function setModelPrice(catalog: Catalog, modelId: string, price: Price): void {
  const model = catalog.models.get(modelId)!;
  model.price = price;
  for (const d of model.deployments) d.price = price;
}

/**
 * Starts the real HTTP server on a free port. PGlite costs seconds and hundreds of MB per
 * instance, so a test file starts one gateway in beforeAll and shares it.
 */
export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const db = await (opts.target ?? dbTargets[0]).open(opts.exactHolds ? { leases: false } : undefined);
  const catalog = opts.catalog ?? (opts.configPath ? undefined : localCatalog(opts.localRate ?? 0));
  // Its log goes to the run's capture, which is scanned for credentials at the end (log-capture.ts).
  const gateway = await startGateway({ ...capturedLogOptions(), ...opts, catalog, port: 0, ledger: db.ledger, adminKey: ADMIN_KEY });
  captureGateway(gateway, { adminKey: ADMIN_KEY, metricsToken: opts.metricsToken }, 'startTestGateway');
  const newAccount = async (balance = 100_000_000_000n, name = 'test') => {
    const account = await db.ledger.createAccount(name, balance);
    const { key } = await db.ledger.createKey(account.id, { name });
    return { accountId: account.id, key };
  };
  const first = await newAccount(opts.balance);
  return {
    url: gateway.url,
    gateway,
    ledger: db.ledger,
    db,
    accountId: first.accountId,
    key: first.key,
    adminKey: ADMIN_KEY,
    newAccount,
    admin: (path, method = 'GET', body) =>
      fetch(`${gateway.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      await gateway.close();
      await db.cleanup();
    },
  };
}

/** A fake upstream and a test gateway in front of it. */
export interface FakeGateway {
  fake: FakeUpstream;
  gw: TestGateway;
  /** Stops the gateway, then the upstream connection pools, then the fake. */
  close(): Promise<void>;
}

/**
 * Starts a fake upstream, then a gateway with the options `gatewayOptions` derives from it (a
 * catalog pointing at the fake, usually). Closing in the reverse order leaves no pooled upstream
 * connection to a fake that is gone.
 */
export async function startFakeGateway(
  gatewayOptions: (fake: FakeUpstream) => TestGatewayOptions,
  fakeOptions?: FakeUpstreamOptions,
): Promise<FakeGateway> {
  const fake = await startFakeUpstream(fakeOptions);
  let gw: TestGateway;
  try {
    gw = await startTestGateway(gatewayOptions(fake));
  } catch (e) {
    await fake.close();
    throw e;
  }
  return {
    fake,
    gw,
    async close() {
      await gw.close();
      await closeAgents();
      await fake.close();
    },
  };
}

/** Every database target this run covers (PGlite, plus PostgreSQL when configured). */
export { dbTargets };
