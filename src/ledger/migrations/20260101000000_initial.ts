import { sql, type Kysely } from 'kysely';

/**
 * The ledger's tables. Invariants live here as constraints, so no code path can break them:
 * balances never go negative, holds never exceed the balance, a hold resolves once,
 * and the journal is append-only (a trigger refuses UPDATE and DELETE).
 * Never imports app code: a migration must mean the same thing forever.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      name text NOT NULL,
      balance bigint NOT NULL CHECK (balance >= 0),
      held bigint NOT NULL DEFAULT 0 CHECK (held >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT held_within_balance CHECK (held <= balance)
    )`.execute(db);

  await sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      name text NOT NULL DEFAULT '',
      prefix text NOT NULL,
      hash text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX api_keys_account ON api_keys (account_id)`.execute(db);

  await sql`
    CREATE TABLE holds (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      amount bigint NOT NULL CHECK (amount > 0),
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'settled', 'released', 'expired')),
      captured bigint NOT NULL DEFAULT 0 CHECK (captured >= 0 AND captured <= amount),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      resolved_at timestamptz,
      CONSTRAINT resolved_iff_not_pending CHECK ((status = 'pending') = (resolved_at IS NULL)),
      CONSTRAINT captured_only_when_settled CHECK (status = 'settled' OR captured = 0)
    )`.execute(db);
  await sql`CREATE INDEX holds_pending_expiry ON holds (expires_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX holds_account ON holds (account_id)`.execute(db);

  await sql`
    CREATE TABLE journal (
      id bigserial PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      kind text NOT NULL CHECK (kind IN ('credit', 'capture')),
      amount bigint NOT NULL,
      balance_after bigint NOT NULL CHECK (balance_after >= 0),
      request_id text,
      model text,
      cost bigint CHECK (cost >= 0),
      input_no_cache bigint,
      input_cache_read bigint,
      input_cache_write bigint,
      output_tokens bigint,
      reasoning_tokens bigint,
      reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT capture_shape CHECK (kind <> 'capture'
        OR (amount <= 0 AND request_id IS NOT NULL AND model IS NOT NULL AND cost >= -amount))
    )`.execute(db);
  await sql`CREATE INDEX journal_account ON journal (account_id, id)`.execute(db);
  await sql`
    CREATE FUNCTION journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'journal is append-only';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER journal_append_only BEFORE UPDATE OR DELETE ON journal
    FOR EACH ROW EXECUTE FUNCTION journal_append_only()`.execute(db);

  await sql`
    CREATE TABLE usage_records (
      request_id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      key_id text,
      model_requested text NOT NULL,
      model_served text,
      attempts jsonb NOT NULL DEFAULT '[]',
      input_no_cache bigint NOT NULL DEFAULT 0,
      input_cache_read bigint NOT NULL DEFAULT 0,
      input_cache_write bigint NOT NULL DEFAULT 0,
      output_tokens bigint NOT NULL DEFAULT 0,
      reasoning_tokens bigint NOT NULL DEFAULT 0,
      cost bigint NOT NULL CHECK (cost >= 0),
      latency_ms bigint NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX usage_records_account ON usage_records (account_id, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['usage_records', 'journal', 'holds', 'api_keys', 'accounts']) {
    await sql`DROP TABLE IF EXISTS ${sql.table(t)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS journal_append_only()`.execute(db);
}
