import { sql, type Kysely } from 'kysely';

/**
 * The ledger's tables on SQLite, as PostgreSQL's migrations leave them, with the same invariants
 * as constraints: held never negative, a hold's capture within its amount, a hold resolved at most
 * once (resolved_at set exactly when it leaves pending), budgets' spent + held within their limit
 * (`budget_within_limit`), one hold per request id, and a journal that triggers keep append-only.
 * As on PostgreSQL after the late-capture migration, the balance itself may go below zero (a
 * capture after its hold expired); that holds never exceed what is available is the hold's rule.
 *
 * Timestamps are epoch milliseconds (INTEGER), JSON is text checked by json_valid, money is
 * INTEGER (64-bit, exact). Never imports app code.
 */
const NOW_MS = sql.raw(`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      balance INTEGER NOT NULL,
      held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS}
    ) STRICT`.execute(db);

  await sql`
    CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      name TEXT NOT NULL DEFAULT '',
      prefix TEXT NOT NULL,
      hash TEXT NOT NULL UNIQUE CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS},
      revoked_at INTEGER,
      rpm_limit INTEGER CHECK (rpm_limit > 0),
      tpm_limit INTEGER CHECK (tpm_limit > 0),
      allowed_models TEXT CHECK (allowed_models IS NULL OR (json_valid(allowed_models) AND json_array_length(allowed_models) > 0)),
      expires_at INTEGER,
      budget_time_zone TEXT NOT NULL DEFAULT 'UTC'
    ) STRICT`.execute(db);
  await sql`CREATE INDEX api_keys_account ON api_keys (account_id)`.execute(db);

  await sql`
    CREATE TABLE holds (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      amount INTEGER NOT NULL CHECK (amount > 0),
      status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'settled', 'released', 'expired')),
      captured INTEGER NOT NULL DEFAULT 0 CHECK (captured >= 0 AND captured <= amount),
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS},
      expires_at INTEGER NOT NULL,
      resolved_at INTEGER,
      CONSTRAINT resolved_iff_not_pending CHECK ((status = 'pending') = (resolved_at IS NULL)),
      CONSTRAINT captured_only_when_settled CHECK (status = 'settled' OR captured = 0)
    ) STRICT`.execute(db);
  await sql`CREATE INDEX holds_pending_expiry ON holds (expires_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX holds_account ON holds (account_id)`.execute(db);

  await sql`
    CREATE TABLE journal (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      kind TEXT NOT NULL CHECK (kind IN ('credit', 'capture')),
      amount INTEGER NOT NULL,
      balance_after INTEGER NOT NULL,
      request_id TEXT,
      model TEXT,
      cost INTEGER CHECK (cost >= 0),
      input_no_cache INTEGER,
      input_cache_read INTEGER,
      input_cache_write INTEGER,
      output_tokens INTEGER,
      reasoning_tokens INTEGER,
      reason TEXT,
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS},
      CONSTRAINT capture_shape CHECK (kind <> 'capture'
        OR (amount <= 0 AND request_id IS NOT NULL AND model IS NOT NULL AND cost >= -amount))
    ) STRICT`.execute(db);
  await sql`CREATE INDEX journal_account ON journal (account_id, id)`.execute(db);
  await sql`CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END`.execute(db);
  await sql`CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END`.execute(db);

  await sql`
    CREATE TABLE usage_records (
      request_id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      key_id TEXT,
      model_requested TEXT NOT NULL,
      model_served TEXT,
      attempts TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attempts)),
      input_no_cache INTEGER NOT NULL DEFAULT 0,
      input_cache_read INTEGER NOT NULL DEFAULT 0,
      input_cache_write INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0,
      reasoning_tokens INTEGER NOT NULL DEFAULT 0,
      cost INTEGER NOT NULL CHECK (cost >= 0),
      latency_ms INTEGER NOT NULL,
      status TEXT NOT NULL,
      end_user TEXT,
      session_id TEXT,
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS}
    ) STRICT`.execute(db);
  await sql`CREATE INDEX usage_records_account ON usage_records (account_id, created_at)`.execute(db);
  await sql`CREATE INDEX usage_records_end_user ON usage_records (account_id, end_user, created_at) WHERE end_user IS NOT NULL`.execute(db);
  await sql`CREATE INDEX usage_records_session ON usage_records (account_id, session_id, created_at) WHERE session_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX usage_records_created ON usage_records (created_at)`.execute(db);
  await sql`CREATE INDEX usage_records_key ON usage_records (key_id, created_at) WHERE key_id IS NOT NULL`.execute(db);

  await sql`
    CREATE TABLE key_budgets (
      key_id TEXT NOT NULL REFERENCES api_keys(id),
      period TEXT NOT NULL CHECK (period IN ('day', 'week', 'month', 'lifetime')),
      limit_amount INTEGER NOT NULL CHECK (limit_amount > 0),
      PRIMARY KEY (key_id, period)
    ) STRICT`.execute(db);
  await sql`
    CREATE TABLE budget_usage (
      key_id TEXT NOT NULL REFERENCES api_keys(id),
      period TEXT NOT NULL CHECK (period IN ('day', 'week', 'month', 'lifetime')),
      period_start INTEGER NOT NULL,
      limit_amount INTEGER NOT NULL CHECK (limit_amount > 0),
      spent INTEGER NOT NULL DEFAULT 0 CHECK (spent >= 0),
      held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0),
      PRIMARY KEY (key_id, period, period_start),
      CONSTRAINT budget_within_limit CHECK (spent + held <= limit_amount)
    ) STRICT`.execute(db);
  await sql`
    CREATE TABLE budget_holds (
      hold_id TEXT NOT NULL REFERENCES holds(id),
      key_id TEXT NOT NULL,
      period TEXT NOT NULL,
      period_start INTEGER NOT NULL,
      PRIMARY KEY (hold_id, period)
    ) STRICT`.execute(db);

  await sql`
    CREATE TABLE stored_responses (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      response TEXT NOT NULL CHECK (json_valid(response)),
      input_items TEXT NOT NULL CHECK (json_valid(input_items)),
      created_at INTEGER NOT NULL DEFAULT ${NOW_MS},
      expires_at INTEGER NOT NULL
    ) STRICT`.execute(db);
  await sql`CREATE INDEX stored_responses_expiry ON stored_responses (expires_at)`.execute(db);
  await sql`
    CREATE TABLE stored_response_items (
      account_id TEXT NOT NULL,
      item_id TEXT NOT NULL,
      response_id TEXT NOT NULL REFERENCES stored_responses(id) ON DELETE CASCADE,
      item TEXT NOT NULL CHECK (json_valid(item)),
      PRIMARY KEY (account_id, item_id, response_id)
    ) STRICT`.execute(db);
  await sql`CREATE INDEX stored_response_items_response ON stored_response_items (response_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['stored_response_items', 'stored_responses', 'budget_holds', 'budget_usage', 'key_budgets', 'usage_records', 'journal', 'holds', 'api_keys', 'accounts']) {
    await sql`DROP TABLE IF EXISTS ${sql.table(t)}`.execute(db);
  }
}
