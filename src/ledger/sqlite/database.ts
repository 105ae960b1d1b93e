/**
 * The embedded SQLite ledger's connection: libSQL's better-sqlite3-compatible binding (its native
 * binary is an npm package per platform, so nothing is compiled or fetched at install) under
 * Kysely's own SqliteDialect. One connection, in this process; Kysely's driver queues its users.
 *
 * What differs from PostgreSQL is settled here, once, so the ledger's rows look the same on every
 * database: INTEGER columns come back as bigint (never a float), timestamps are stored as epoch
 * milliseconds and come back as Date, JSON and array columns are stored as JSON text and come back
 * parsed, and a transaction begins IMMEDIATE (it takes the write lock at BEGIN, so two
 * transactions never read the same balance and both write it).
 */
import { createRequire } from 'node:module';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDatabase, type SqliteStatement } from 'kysely';

const require = createRequire(import.meta.url);

interface LibsqlStatement {
  readonly reader: boolean;
  all(params: unknown[]): unknown[];
  run(params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  iterate(params: unknown[]): IterableIterator<unknown>;
}
interface LibsqlDatabase {
  prepare(sql: string): LibsqlStatement;
  exec(sql: string): void;
  defaultSafeIntegers(on: boolean): void;
  close(): void;
}

/** Columns stored as epoch milliseconds, read as Date. */
export const DATE_COLUMNS = new Set(['created_at', 'revoked_at', 'expires_at', 'resolved_at', 'period_start', 'last_seen_at', 'disabled_at', 'after_created_at', 'delivered_at', 'held_until']);
/** INTEGER columns that the ledger reads as numbers (PostgreSQL `integer`): everything else stays bigint. */
export const NUMBER_COLUMNS = new Set(['rpm_limit', 'tpm_limit', 'in_flight']);
/** Columns stored as JSON text (PostgreSQL jsonb and text[]). */
export const JSON_COLUMNS = new Set(['allowed_models', 'attempts', 'response', 'input_items', 'item', 'groups', 'before', 'after', 'pricing']);

/**
 * Parameters as SQLite takes them. Anything else is refused with a TypeError here: the native
 * binding aborts the process on a value it cannot bind rather than throwing.
 */
function toParam(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (v === undefined) return null;
  if (v instanceof Date) return BigInt(v.getTime());
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (Array.isArray(v)) return JSON.stringify(v);
  if (Buffer.isBuffer(v)) return v;
  throw new TypeError(`cannot bind a ${typeof v} to SQLite`);
}

function fromRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const k in row) {
    const v = row[k];
    if (v === null) continue;
    if (DATE_COLUMNS.has(k)) row[k] = new Date(Number(v));
    else if (NUMBER_COLUMNS.has(k)) row[k] = Number(v);
    else if (JSON_COLUMNS.has(k) && typeof v === 'string') row[k] = JSON.parse(v);
  }
  return row;
}

/** Prepared statements by SQL text: the ledger's statements are fixed texts, so each is parsed once. */
const STATEMENT_CACHE_SIZE = 500;

/** Kysely's SqliteDatabase over libSQL, with the conversions above and a statement cache. */
function kyselyDatabase(db: LibsqlDatabase): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  const wrap = (stmt: LibsqlStatement): SqliteStatement => ({
    reader: stmt.reader,
    all: (params) => (stmt.all(Array.from(params, toParam)) as Record<string, unknown>[]).map(fromRow),
    run: (params) => stmt.run(Array.from(params, toParam)),
    iterate: (params) => {
      const it = stmt.iterate(Array.from(params, toParam));
      return (function* () {
        for (const row of it) yield fromRow(row as Record<string, unknown>);
      })();
    },
  });
  return {
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = wrap(db.prepare(sql));
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
    close: () => db.close(),
  };
}

/** Kysely's driver, with transactions that take SQLite's write lock at BEGIN. */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'));
  }
}

class LedgerSqliteDialect extends SqliteDialect {
  constructor(private readonly database: SqliteDatabase) {
    super({ database });
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.database });
  }
}

/**
 * Opens the SQLite file at `path` (`:memory:` for a database that lives as long as the process).
 * WAL with synchronous=NORMAL: a commit is in the operating system's hands when it returns, so a
 * killed process (kill -9) loses nothing; only a power loss can take the last commits.
 */
export function openSqlite(path: string): { dialect: SqliteDialect; close(): void } {
  const Database = require('libsql') as new (path: string) => LibsqlDatabase;
  const db = new Database(path);
  try {
    db.defaultSafeIntegers(true);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    // Only another process ignoring the data directory's lock (a backup, the sqlite3 shell) can hold
    // the write lock. SQLite waits for it in this thread, blocking every request, and a request may
    // meet two such waits (a settle's, then its hold's): 500 ms each, then SQLITE_BUSY, which the
    // gateway answers as a database that is away (503, settles retried).
    db.exec('PRAGMA busy_timeout = 500');
  } catch (e) {
    db.close();
    throw e;
  }
  return { dialect: new LedgerSqliteDialect(kyselyDatabase(db)), close: () => db.close() };
}
