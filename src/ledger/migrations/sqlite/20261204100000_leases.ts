import { sql, type Kysely } from 'kysely';

/** The SQLite counterpart of ../20261204100000_leases.ts (timestamps are epoch milliseconds). */
const NOW_MS = sql.raw(`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE leases (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      instance TEXT NOT NULL,
      amount INTEGER NOT NULL CHECK (amount >= 0),
      status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'returned', 'expired')),
      in_flight INTEGER NOT NULL DEFAULT 0 CHECK (in_flight >= 0),
      in_use INTEGER NOT NULL DEFAULT 0 CHECK (in_use >= 0),
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS},
      expires_at INTEGER NOT NULL,
      resolved_at INTEGER,
      CONSTRAINT lease_resolved_iff_not_active CHECK ((status = 'active') = (resolved_at IS NULL)),
      CONSTRAINT lease_returned_whole CHECK (status <> 'returned' OR amount = 0)
    ) STRICT`.execute(db);
  await sql`CREATE INDEX leases_active_expiry ON leases (expires_at) WHERE status = 'active'`.execute(db);
  await sql`CREATE INDEX leases_active_account ON leases (account_id) WHERE status = 'active'`.execute(db);
  await sql`ALTER TABLE usage_records ADD COLUMN lease_id TEXT REFERENCES leases(id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE usage_records DROP COLUMN lease_id`.execute(db);
  await sql`DROP TABLE leases`.execute(db);
}
