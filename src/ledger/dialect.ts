import { SqliteAdapter, sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';

/**
 * Which SQL a ledger statement speaks. PostgreSQL and PGlite share one text; the embedded SQLite
 * has no UPDATE in a CTE, no FOR UPDATE and no time zones, so where the texts differ each
 * operation's module keeps its SQLite variant beside the PostgreSQL one and picks by this.
 */
export function isSqlite(db: Kysely<any> | Transaction<any>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** The statement's clock: the database's on PostgreSQL, this process's (the database's too) on SQLite. */
export function nowSql(db: Kysely<any> | Transaction<any>): RawBuilder<Date> {
  return isSqlite(db) ? sql<Date>`${Date.now()}` : sql<Date>`now()`;
}

/**
 * Runs `fn` in a transaction on SQLite: in the caller's, when `db` is one already (SQLite has one
 * connection, so a second transaction could only wait for the first), else in a new one.
 */
export function sqliteTransaction<DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Transaction<DB>) : db.transaction().execute(fn);
}
