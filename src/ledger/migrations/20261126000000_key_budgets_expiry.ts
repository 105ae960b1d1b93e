import { sql, type Kysely } from 'kysely';

/**
 * Key expiry, and spend budgets per key (see budgets.ts).
 *
 * `key_budgets` holds what the admin set: at most one limit per period. `budget_usage` holds, per
 * key, period and period start, what was spent and what is held, with the limit the last hold was
 * checked against; its CHECK makes "spent + held never passes the limit" a fact of the database,
 * whatever the code does. A new period is a new row, so a reset needs no job. `budget_holds`
 * records which usage rows each hold reserved on, so its settle, release or expiry returns
 * exactly there even if the key's budgets or time zone changed meanwhile.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_keys
      ADD COLUMN expires_at timestamptz,
      ADD COLUMN budget_time_zone text NOT NULL DEFAULT 'UTC'`.execute(db);
  await sql`
    CREATE TABLE key_budgets (
      key_id text NOT NULL REFERENCES api_keys(id),
      period text NOT NULL CHECK (period IN ('day', 'week', 'month', 'lifetime')),
      limit_amount bigint NOT NULL CHECK (limit_amount > 0),
      PRIMARY KEY (key_id, period)
    )`.execute(db);
  await sql`
    CREATE TABLE budget_usage (
      key_id text NOT NULL REFERENCES api_keys(id),
      period text NOT NULL CHECK (period IN ('day', 'week', 'month', 'lifetime')),
      period_start timestamptz NOT NULL,
      limit_amount bigint NOT NULL CHECK (limit_amount > 0),
      spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0),
      held bigint NOT NULL DEFAULT 0 CHECK (held >= 0),
      PRIMARY KEY (key_id, period, period_start),
      CONSTRAINT budget_within_limit CHECK (spent + held <= limit_amount)
    )`.execute(db);
  await sql`
    CREATE TABLE budget_holds (
      hold_id text NOT NULL REFERENCES holds(id),
      key_id text NOT NULL,
      period text NOT NULL,
      period_start timestamptz NOT NULL,
      PRIMARY KEY (hold_id, period)
    )`.execute(db);
  // Spend summaries: every account's usage by time, and one key's.
  await sql`CREATE INDEX usage_records_created ON usage_records (created_at)`.execute(db);
  await sql`CREATE INDEX usage_records_key ON usage_records (key_id, created_at) WHERE key_id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS usage_records_key`.execute(db);
  await sql`DROP INDEX IF EXISTS usage_records_created`.execute(db);
  await sql`DROP TABLE IF EXISTS budget_holds`.execute(db);
  await sql`DROP TABLE IF EXISTS budget_usage`.execute(db);
  await sql`DROP TABLE IF EXISTS key_budgets`.execute(db);
  await sql`ALTER TABLE api_keys DROP COLUMN expires_at, DROP COLUMN budget_time_zone`.execute(db);
}
