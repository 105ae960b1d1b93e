import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openLedger, type Ledger, type LedgerOptions } from '../../src/ledger/index.js';

/**
 * Where the ledger tests run: SQLite and PGlite always; PostgreSQL when TEST_DATABASE_URL (or DATABASE_URL)
 * is set. On CI the PostgreSQL target is mandatory: it falls back to the local server's URL, so a
 * missing database fails the run instead of silently skipping the race tests.
 */
export const PG_URL: string | undefined =
  process.env.TEST_DATABASE_URL ??
  process.env.DATABASE_URL ??
  (process.env.CI ? 'postgres://postgres@127.0.0.1:5432/test' : undefined);

export interface OpenedTarget {
  ledger: Ledger;
  /** PostgreSQL only: how another process can open the same ledger. */
  databaseUrl?: string;
  schema?: string;
  cleanup(): Promise<void>;
}

/** What a suite may choose of the ledger it opens (balance leases on by default, as in production). */
export type TargetOptions = Pick<LedgerOptions, 'leases'>;

export interface DbTarget {
  name: 'sqlite' | 'pglite' | 'postgres';
  open(opts?: TargetOptions): Promise<OpenedTarget>;
}

const pglite: DbTarget = {
  name: 'pglite',
  async open(opts) {
    const ledger = await openLedger({ dataDir: 'memory://', embedded: 'pglite', ...opts });
    return { ledger, cleanup: () => ledger.close() };
  },
};

const sqlite: DbTarget = {
  name: 'sqlite',
  async open(opts) {
    const ledger = await openLedger({ databaseUrl: 'sqlite::memory:', ...opts });
    return { ledger, cleanup: () => ledger.close() };
  },
};

/**
 * A fresh schema per test file, so parallel files never see each other's rows. `connectUrl`, when
 * given, is how the ledger reaches the same database (a fault-injecting proxy); cleanup goes direct.
 */
export function postgres(url: string, opts: { connectUrl?: string } & Omit<LedgerOptions, 'databaseUrl' | 'schema'> = {}): DbTarget {
  const { connectUrl, ...ledgerOpts } = opts;
  return {
    name: 'postgres',
    async open(opts) {
      const schema = `ledger_test_${randomBytes(6).toString('hex')}`;
      const ledger = await openLedger({ databaseUrl: connectUrl ?? url, schema, poolSize: 20, ...ledgerOpts, ...opts });
      return {
        ledger,
        databaseUrl: url,
        schema,
        async cleanup() {
          await ledger.close();
          const client = new pg.Client({ connectionString: url });
          await client.connect();
          try {
            await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          } finally {
            await client.end();
          }
        },
      };
    },
  };
}

/** The first is the default embedded database's: the test gateway's database when a test names none. */
export const dbTargets: DbTarget[] = PG_URL ? [pglite, sqlite, postgres(PG_URL)] : [pglite, sqlite];
export const pgTarget: DbTarget | undefined = PG_URL ? postgres(PG_URL) : undefined;

/**
 * Opens `target` before the tests of the enclosing describe block and cleans it up after them;
 * `onOpen` receives it once open (the ledger suites keep its ledger in a variable of their own).
 */
export function openForSuite(target: DbTarget, onOpen: (opened: OpenedTarget) => void): void {
  let opened: OpenedTarget | undefined;
  beforeAll(async () => {
    opened = await target.open();
    onOpen(opened);
  });
  afterAll(() => opened?.cleanup());
}
