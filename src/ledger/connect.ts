import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { setFlagsFromString } from 'node:v8';
import type { Database } from './schema.js';
import type { LedgerStatements } from './statements.js';
import { PostgresStatements } from './postgres/index.js';
import { SqliteStatements } from './sqlite/index.js';
import { openSqlite } from './sqlite/database.js';
import { sqlState } from './db-errors.js';
import { DEFAULT_EMBEDDED, lockDataDir, SQLITE_FILE, type EmbeddedDatabase } from './data-dir.js';
import { dirname, join } from 'node:path';

const INT8_OID = 20;

export interface ConnectOptions {
  /** postgres:// URL: use PostgreSQL through `pg`; `sqlite:PATH` or `file:PATH`: that SQLite file. */
  databaseUrl?: string;
  /** The embedded database's data directory when no databaseUrl; `memory://` for an in-memory one. */
  dataDir?: string;
  /** Which embedded database serves `dataDir` (default: see data-dir.ts, embeddedFromEnv). */
  embedded?: EmbeddedDatabase;
  /** PostgreSQL only: run in this schema (created if missing) via the connection's search_path. */
  schema?: string;
  /** PostgreSQL only: pool size (default 20). */
  poolSize?: number;
  /** PostgreSQL only: how long a connection may take to open, or a query wait for a free one (default 1 s). */
  connectTimeoutMs?: number;
  /** PostgreSQL only: the server cancels a statement after this long (default 1 s); see connectPostgres. */
  statementTimeoutMs?: number;
  /** Where lost connections are reported (they never take the process down). */
  log?: { warn(obj: object, msg?: string): void };
}

/**
 * A request waits about a second for the database at most (DECISIONS.md, "Database waits"): a new
 * connection or a free pooled one within 1 s, a statement cancelled by the server after 1 s (the
 * ledger's statements take milliseconds; a settle that fails is retried in the background).
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 1_000;
/** The client gives up this long after the server should have cancelled: the socket is dead, not slow. */
const READ_TIMEOUT_GRACE_MS = 250;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the ledger's database and picks its statements, once: PostgreSQL's for a postgres:// URL
 * and for PGlite (the same SQL), SQLite's for a SQLite file. This is the one place that knows which
 * database the ledger runs on (statements.ts); nothing else asks.
 *
 * One row type for every driver: BIGINT becomes a JS bigint. pg gets a per-pool type config (the
 * global pg.types stays untouched); PGlite gets a parser on its instance; SQLite: sqlite/database.ts.
 */
export async function connect(opts: ConnectOptions): Promise<LedgerStatements> {
  const sqlitePath = opts.databaseUrl ? sqlitePathOf(opts.databaseUrl) : undefined;
  if (sqlitePath !== undefined) return new SqliteStatements(await connectSqlite(sqlitePath));
  if (opts.databaseUrl) {
    const listen = { connectionString: opts.databaseUrl, connectTimeoutMs: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, log: opts.log };
    return new PostgresStatements(await connectPostgres(opts.databaseUrl, opts), opts.schema, listen);
  }
  const dataDir = opts.dataDir ?? './data';
  if ((opts.embedded ?? DEFAULT_EMBEDDED) === 'pglite') return new PostgresStatements(await connectPglite(dataDir));
  const file = dataDir.includes('://') ? ':memory:' : join(dataDir, SQLITE_FILE);
  return new SqliteStatements(await connectSqlite(file, dataDir.includes('://') ? undefined : dataDir));
}

/** The file of a `sqlite:` or `file:` URL (`sqlite::memory:` for an in-memory database); undefined for any other URL. */
export function sqlitePathOf(url: string): string | undefined {
  return /^(?:sqlite|file):(?:\/\/)?(.+)$/.exec(url)?.[1];
}

/**
 * The embedded SQLite ledger. A file's directory is locked to this process as PGlite's is (see
 * lockDataDir): the gateway's caches (keys, the hold forecast) are only exact while it is the one
 * writer.
 */
async function connectSqlite(path: string, lockDir = path === ':memory:' ? undefined : dirname(path)): Promise<Kysely<Database>> {
  const unlock = lockDir === undefined ? undefined : await lockDataDir(lockDir);
  try {
    const { dialect } = openSqlite(path);
    const db = new Kysely<Database>({ dialect });
    if (!unlock) return db;
    const destroy = db.destroy.bind(db);
    db.destroy = async () => {
      try {
        // Everything the WAL holds goes into the database file, and the WAL is emptied: the
        // directory a clean exit leaves is one file that any SQLite tool reads whole.
        await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db).catch(() => undefined);
        await destroy();
      } finally {
        await unlock();
      }
    };
    return db;
  } catch (e) {
    await unlock?.();
    throw e;
  }
}

async function connectPostgres(url: string, opts: ConnectOptions): Promise<Kysely<Database>> {
  if (opts.schema !== undefined && !SCHEMA_NAME.test(opts.schema)) {
    throw new Error(`invalid schema name: ${opts.schema}`);
  }
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID ? (v: string) => BigInt(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const statementTimeoutMs = opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  // statement_timeout is the server's: a slow statement is cancelled and the connection stays.
  // query_timeout is the client's, for a database that no longer answers at all (a blackholed
  // network): without it a query would wait for the kernel to give up on the socket (minutes).
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 20,
    types,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + READ_TIMEOUT_GRACE_MS,
    keepAlive: true,
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  // An idle connection the server ends (pg_terminate_backend, idle_session_timeout, a restart)
  // is reported here; unhandled, this event would end the process. The pool drops that
  // connection and opens a new one when needed, so service resumes with the database.
  pool.on('error', (err) => opts.log?.warn({ err: { message: err.message, code: sqlState(err) } }, 'database connection lost (the pool replaces it)'));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withPreparedStatements(pool) }) });
  if (opts.schema) await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(opts.schema)}`.execute(db);
  return db;
}

/** A statement whose text starts with this comment runs as a named prepared statement (see below). */
const PREPARED = /^\/\* prepared:([a-z0-9-]+) \*\//;

/**
 * The ledger's hot statements (hold, settle, key lookup, heartbeat) are fixed texts marked with
 * a `/* prepared:<name> *\/` comment; on PostgreSQL they run as named prepared statements, so each
 * connection parses and plans them once instead of on every request (planning the batched hold
 * alone costs PostgreSQL more than executing it). Kysely's driver calls `client.query(text,
 * values)`; this wraps each pooled client once to pass the name. PGlite needs nothing: it runs
 * in-process, and the comment is just a comment.
 */
function withPreparedStatements(pool: pg.Pool): pg.Pool {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const wrapped = new WeakSet<pg.PoolClient>();
  pool.connect = (async () => {
    const client = await connect();
    if (!wrapped.has(client)) {
      wrapped.add(client);
      // A checked-out client whose connection drops between statements emits 'error' too; the
      // statement under way (if any) is rejected on its own, and the pool discards the client.
      client.on('error', () => undefined);
      const query = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<unknown>;
      (client as { query: unknown }).query = async (text: unknown, values?: unknown) => {
        const name = typeof text === 'string' ? PREPARED.exec(text)?.[1] : undefined;
        try {
          return await (name ? query({ name, text, values }) : query(text, values));
        } catch (e) {
          // pg stops waiting on a query_timeout but keeps the connection, still waiting for an
          // answer that will not come: end it, so the pool opens a fresh one instead of queueing
          // the next statement behind the dead one.
          if (e instanceof Error && /Query read timeout/.test(e.message)) (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
          throw e;
        }
      };
    }
    return client;
  }) as typeof pool.connect;
  return pool;
}

/**
 * PGlite's server settings: memory sized for one gateway's ledger rather than PostgreSQL's defaults
 * (shared_buffers 128 MB, work_mem 4 MB), which made most of the embedded gateway's resident memory.
 * The ledger's hot rows are few (accounts, keys, pending holds); its tables are read by index.
 * Measured in spec/DECISIONS.md ("Embedded database").
 */
const PGLITE_SETTINGS = ['shared_buffers=16MB', 'work_mem=1MB', 'temp_buffers=1MB', 'maintenance_work_mem=8MB', 'wal_buffers=1MB'];

async function connectPglite(dataDir: string): Promise<Kysely<Database>> {
  const unlock = dataDir.includes('://') ? undefined : await lockDataDir(dataDir);
  // Loaded only when PGlite is the database: the other ledgers never carry its modules.
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([import('@electric-sql/pglite'), import('./postgres/pglite-dialect.js')]);
  let client: PGlite;
  try {
    // PostgreSQL compiled to WebAssembly is ~10 MB of code: V8's optimising tier (TurboFan) spent
    // ~100 MB of memory and seconds of CPU recompiling it in the background after start, for no
    // measured gain per statement. Its baseline compiler (Liftoff) alone is what runs here. The
    // flag only concerns WebAssembly compiled from now on; nothing else in the gateway is wasm.
    setFlagsFromString('--liftoff-only');
    client = await PGlite.create({
      dataDir,
      parsers: { [INT8_OID]: (v: string) => BigInt(v) },
      startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((s) => ['-c', s])],
    });
  } catch (e) {
    await unlock?.();
    throw e;
  }
  if (unlock) {
    const close = client.close.bind(client);
    client.close = async () => {
      try {
        await close();
      } finally {
        await unlock();
      }
    };
  }
  // The dialect queues connections, so transactions never interleave on PGlite's one session.
  return new Kysely<Database>({ dialect: new PGliteDialect(client) });
}

/**
 * Bring the schema up to date. Kysely's Migrator holds an advisory lock, so concurrent starts are safe.
 * With a schema (PostgreSQL), the migration tables are looked up in it: unqualified, Kysely's existence check
 * matches another schema's tables and then fails on "relation kysely_migration_lock does not exist".
 */
export async function migrate(s: LedgerStatements): Promise<string[]> {
  const provider = { getMigrations: async () => s.migrations };
  const migrator = new Migrator({ db: s.db, provider, migrationTableSchema: s.migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
