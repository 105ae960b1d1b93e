import { sql, type Kysely } from 'kysely';

/** The SQLite counterpart of ../20261128000000_users_audit.ts (users, usage_records.user_id, the append-only audit log). */
const NOW_MS = sql.raw(`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      issuer TEXT NOT NULL,
      subject TEXT NOT NULL,
      name TEXT,
      groups TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(groups)),
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS},
      last_seen_at INTEGER NOT NULL DEFAULT ${NOW_MS},
      disabled_at INTEGER,
      CONSTRAINT users_issuer_subject UNIQUE (issuer, subject)
    ) STRICT`.execute(db);
  await sql`CREATE INDEX users_account ON users (account_id, id)`.execute(db);
  await sql`ALTER TABLE usage_records ADD COLUMN user_id TEXT`.execute(db);
  await sql`CREATE INDEX usage_records_user ON usage_records (user_id, created_at) WHERE user_id IS NOT NULL`.execute(db);
  await sql`
    CREATE TABLE audit_log (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      actor_kind TEXT NOT NULL CHECK (actor_kind IN ('admin_key', 'user', 'cli', 'system')),
      actor_id TEXT,
      actor_name TEXT,
      action TEXT NOT NULL,
      target_type TEXT NOT NULL,
      target_id TEXT,
      before TEXT CHECK (before IS NULL OR json_valid(before)),
      after TEXT CHECK (after IS NULL OR json_valid(after)),
      request_id TEXT,
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS}
    ) STRICT`.execute(db);
  await sql`CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id)`.execute(db);
  await sql`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`.execute(db);
  await sql`CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS audit_log`.execute(db);
  await sql`DROP INDEX IF EXISTS usage_records_user`.execute(db);
  await sql`ALTER TABLE usage_records DROP COLUMN user_id`.execute(db);
  await sql`DROP TABLE IF EXISTS users`.execute(db);
}
