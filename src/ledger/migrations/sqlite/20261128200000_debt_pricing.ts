import { sql, type Kysely } from 'kysely';

/**
 * The SQLite counterpart of ../20261128200000_debt_pricing.ts. SQLite cannot drop a CHECK, so the
 * holds table is rebuilt without `captured <= amount` (SQLite's documented procedure: foreign keys
 * off, copy, drop, rename, indexes, a foreign key check, foreign keys on; the migrator runs SQLite's
 * migrations outside a transaction, so each step here is one, and the rebuild is one transaction).
 */
const NOW_MS = sql.raw(`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);

async function rebuildHolds(db: Kysely<any>, capturedCheck: string): Promise<void> {
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await sql`BEGIN IMMEDIATE`.execute(db);
    try {
      await sql`
        CREATE TABLE holds_new (
          id TEXT PRIMARY KEY,
          account_id TEXT NOT NULL REFERENCES accounts(id),
          amount INTEGER NOT NULL CHECK (amount > 0),
          status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'settled', 'released', 'expired')),
          captured INTEGER NOT NULL DEFAULT 0 CHECK (${sql.raw(capturedCheck)}),
          created_at INTEGER NOT NULL DEFAULT ${NOW_MS},
          expires_at INTEGER NOT NULL,
          resolved_at INTEGER,
          CONSTRAINT resolved_iff_not_pending CHECK ((status = 'pending') = (resolved_at IS NULL)),
          CONSTRAINT captured_only_when_settled CHECK (status = 'settled' OR captured = 0)
        ) STRICT`.execute(db);
      await sql`INSERT INTO holds_new (id, account_id, amount, status, captured, created_at, expires_at, resolved_at)
        SELECT id, account_id, amount, status, captured, created_at, expires_at, resolved_at FROM holds`.execute(db);
      await sql`DROP TABLE holds`.execute(db);
      await sql`ALTER TABLE holds_new RENAME TO holds`.execute(db);
      await sql`CREATE INDEX holds_pending_expiry ON holds (expires_at) WHERE status = 'pending'`.execute(db);
      await sql`CREATE INDEX holds_account ON holds (account_id)`.execute(db);
      const { rows } = await sql`PRAGMA foreign_key_check`.execute(db);
      if (rows.length > 0) throw new Error(`rebuilding holds broke ${rows.length} foreign keys`);
      await sql`COMMIT`.execute(db);
    } catch (e) {
      await sql`ROLLBACK`.execute(db);
      throw e;
    }
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await rebuildHolds(db, 'captured >= 0');
  await sql`ALTER TABLE usage_records ADD COLUMN beyond_hold INTEGER NOT NULL DEFAULT 0 CHECK (beyond_hold >= 0)`.execute(db);
  await sql`ALTER TABLE usage_records ADD COLUMN pricing TEXT CHECK (pricing IS NULL OR json_valid(pricing))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE usage_records DROP COLUMN pricing`.execute(db);
  await sql`ALTER TABLE usage_records DROP COLUMN beyond_hold`.execute(db);
  await rebuildHolds(db, 'captured >= 0 AND captured <= amount');
}
