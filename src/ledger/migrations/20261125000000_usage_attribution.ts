import { sql, type Kysely } from 'kysely';

/**
 * Who spent it: the end user and session the client named (OpenAI `user` / `safety_identifier` /
 * `prompt_cache_key`, Anthropic `metadata.user_id`, Claude Code's `X-Claude-Code-Session-Id`).
 * NULL when the client named none. Indexed per account for the admin usage list's filters.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE usage_records ADD COLUMN end_user text, ADD COLUMN session_id text`.execute(db);
  await sql`CREATE INDEX usage_records_end_user ON usage_records (account_id, end_user, created_at) WHERE end_user IS NOT NULL`.execute(db);
  await sql`CREATE INDEX usage_records_session ON usage_records (account_id, session_id, created_at) WHERE session_id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS usage_records_end_user`.execute(db);
  await sql`DROP INDEX IF EXISTS usage_records_session`.execute(db);
  await sql`ALTER TABLE usage_records DROP COLUMN end_user, DROP COLUMN session_id`.execute(db);
}
