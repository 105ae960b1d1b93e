import { sql, type Kysely } from 'kysely';

/**
 * The SQLite counterpart of ../20261128300000_budget_owners.ts. SQLite cannot drop a reference or
 * change a primary key in place: both tables are rebuilt with their rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE budget_usage_owned (
      owner TEXT NOT NULL,
      period TEXT NOT NULL CHECK (period IN ('day', 'week', 'month', 'lifetime')),
      period_start INTEGER NOT NULL,
      limit_amount INTEGER NOT NULL CHECK (limit_amount > 0),
      spent INTEGER NOT NULL DEFAULT 0 CHECK (spent >= 0),
      held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
      PRIMARY KEY (owner, period, period_start),
      CONSTRAINT budget_within_limit CHECK (spent + held <= limit_amount)
    ) STRICT`.execute(db);
  await sql`INSERT INTO budget_usage_owned SELECT key_id, period, period_start, limit_amount, spent, held FROM budget_usage`.execute(db);
  await sql`DROP TABLE budget_usage`.execute(db);
  await sql`ALTER TABLE budget_usage_owned RENAME TO budget_usage`.execute(db);
  await sql`
    CREATE TABLE budget_holds_owned (
      hold_id TEXT NOT NULL REFERENCES holds(id),
      owner TEXT NOT NULL,
      period TEXT NOT NULL,
      period_start INTEGER NOT NULL,
      PRIMARY KEY (hold_id, owner, period)
    ) STRICT`.execute(db);
  await sql`INSERT INTO budget_holds_owned SELECT hold_id, key_id, period, period_start FROM budget_holds`.execute(db);
  await sql`DROP TABLE budget_holds`.execute(db);
  await sql`ALTER TABLE budget_holds_owned RENAME TO budget_holds`.execute(db);
}

/** Back to key budgets only: users' and groups' usage rows are dropped with the tables' new shape. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE budget_usage_keys (
      key_id TEXT NOT NULL REFERENCES api_keys(id),
      period TEXT NOT NULL CHECK (period IN ('day', 'week', 'month', 'lifetime')),
      period_start INTEGER NOT NULL,
      limit_amount INTEGER NOT NULL CHECK (limit_amount > 0),
      spent INTEGER NOT NULL DEFAULT 0 CHECK (spent >= 0),
      held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
      PRIMARY KEY (key_id, period, period_start),
      CONSTRAINT budget_within_limit CHECK (spent + held <= limit_amount)
    ) STRICT`.execute(db);
  await sql`INSERT INTO budget_usage_keys SELECT owner, period, period_start, limit_amount, spent, held FROM budget_usage WHERE owner IN (SELECT id FROM api_keys)`.execute(db);
  await sql`DROP TABLE budget_usage`.execute(db);
  await sql`ALTER TABLE budget_usage_keys RENAME TO budget_usage`.execute(db);
  await sql`
    CREATE TABLE budget_holds_keys (
      hold_id TEXT NOT NULL REFERENCES holds(id),
      key_id TEXT NOT NULL,
      period TEXT NOT NULL,
      period_start INTEGER NOT NULL,
      PRIMARY KEY (hold_id, period)
    ) STRICT`.execute(db);
  await sql`INSERT INTO budget_holds_keys SELECT hold_id, owner, period, period_start FROM budget_holds WHERE owner IN (SELECT id FROM api_keys)`.execute(db);
  await sql`DROP TABLE budget_holds`.execute(db);
  await sql`ALTER TABLE budget_holds_keys RENAME TO budget_holds`.execute(db);
}
