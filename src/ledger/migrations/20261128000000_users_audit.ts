import { sql, type Kysely } from 'kysely';

/**
 * Users signed in through an identity provider, and the audit log.
 *
 * A user row is made on first sight (id derived from issuer and subject, so instances racing on it
 * insert the same row once); `disabled_at` refuses the user. Usage records name the user they
 * came from. The audit log records every admin change (who, what, the target, the values before
 * and after, the request id) and, like the journal, a trigger refuses to update or delete it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      issuer text NOT NULL,
      subject text NOT NULL,
      name text,
      groups jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      disabled_at timestamptz,
      CONSTRAINT users_issuer_subject UNIQUE (issuer, subject)
    )`.execute(db);
  await sql`CREATE INDEX users_account ON users (account_id, id)`.execute(db);
  await sql`ALTER TABLE usage_records ADD COLUMN user_id text`.execute(db);
  await sql`CREATE INDEX usage_records_user ON usage_records (user_id, created_at) WHERE user_id IS NOT NULL`.execute(db);
  await sql`
    CREATE TABLE audit_log (
      id bigserial PRIMARY KEY,
      actor_kind text NOT NULL CHECK (actor_kind IN ('admin_key', 'user', 'cli', 'system')),
      actor_id text,
      actor_name text,
      action text NOT NULL,
      target_type text NOT NULL,
      target_id text,
      before jsonb,
      after jsonb,
      request_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX audit_log_target ON audit_log (target_type, target_id, id)`.execute(db);
  await sql`
    CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_log is append-only';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`.execute(db);
  // TRUNCATE skips row triggers: a statement trigger refuses it too.
  await sql`
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS audit_log`.execute(db);
  await sql`DROP FUNCTION IF EXISTS audit_log_append_only()`.execute(db);
  await sql`DROP INDEX IF EXISTS usage_records_user`.execute(db);
  await sql`ALTER TABLE usage_records DROP COLUMN IF EXISTS user_id`.execute(db);
  await sql`DROP TABLE IF EXISTS users`.execute(db);
}
