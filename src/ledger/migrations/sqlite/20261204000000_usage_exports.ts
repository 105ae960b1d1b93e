import { sql, type Kysely } from 'kysely';

/** The SQLite counterpart of ../20261204000000_usage_exports.ts (timestamps in epoch milliseconds). */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE usage_exports (
      name TEXT PRIMARY KEY,
      after_created_at INTEGER NOT NULL DEFAULT 0,
      after_request_id TEXT NOT NULL DEFAULT '',
      delivered INTEGER NOT NULL DEFAULT 0 CHECK (delivered >= 0),
      delivered_at INTEGER,
      holder TEXT,
      held_until INTEGER,
      CONSTRAINT usage_exports_claim CHECK ((holder IS NULL) = (held_until IS NULL))
    ) STRICT`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS usage_exports`.execute(db);
}
