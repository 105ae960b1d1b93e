import type { Kysely, Transaction } from 'kysely';

/**
 * Runs `fn` in a transaction: in the caller's, when `db` is one already (SQLite has one
 * connection, so a second transaction could only wait for the first), else in a new one, which
 * takes the database's write lock at BEGIN (see database.ts).
 */
export function inTransaction<DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Transaction<DB>) : db.transaction().execute(fn);
}
