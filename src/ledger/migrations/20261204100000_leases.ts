import { sql, type Kysely } from 'kysely';

/**
 * Balance leases (leases.ts): an instance reserves part of an account's available balance in one
 * row and serves holds from it in memory. While a lease is active its amount is counted in the
 * account's `held` (held = pending holds + active leases), so the rule that a hold only takes what
 * the available balance covers applies to the lease as a whole. A lease ends once: returned by its
 * instance (amount 0: everything went back or was captured) or expired by the reaper (its amount,
 * as it stood, went back to the account). `in_flight` is how many requests its instance was running
 * on it at the lease's last write, reported when it expires unreturned; `in_use` what they held
 * then (the rest of the amount is unused, and reported as available: accounts.ts).
 *
 * A lease serves requests on the key cache's word, so a change to a key (its revocation, expiry,
 * limits, budgets) or a user's disabling is announced by the database itself, however it was made
 * (the admin API, the CLI, an operator's SQL): a trigger NOTIFYs `switchyard_ledger` with the
 * schema, `key` and the id, delivered to every listening instance when the change commits
 * (statements.ts, `listen`). A usage record served from a
 * lease names it (`lease_id`): its captures have no hold.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE leases (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      instance text NOT NULL,
      amount bigint NOT NULL CHECK (amount >= 0),
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'returned', 'expired')),
      in_flight integer NOT NULL DEFAULT 0 CHECK (in_flight >= 0),
      in_use bigint NOT NULL DEFAULT 0 CHECK (in_use >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      resolved_at timestamptz,
      CONSTRAINT lease_resolved_iff_not_active CHECK ((status = 'active') = (resolved_at IS NULL)),
      CONSTRAINT lease_returned_whole CHECK (status <> 'returned' OR amount = 0)
    )`.execute(db);
  await sql`CREATE INDEX leases_active_expiry ON leases (expires_at) WHERE status = 'active'`.execute(db);
  await sql`CREATE INDEX leases_active_account ON leases (account_id) WHERE status = 'active'`.execute(db);
  await sql`ALTER TABLE usage_records ADD COLUMN lease_id text REFERENCES leases(id)`.execute(db);
  await sql`
    CREATE FUNCTION announce_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      r jsonb := to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END);
    BEGIN
      -- A key's budgets name it by key_id; a key and a user by id.
      PERFORM pg_notify('switchyard_ledger', current_schema() || E'\tkey\t' || coalesce(r ->> 'key_id', r ->> 'id'));
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER announce_key_change AFTER UPDATE OR DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION announce_key_change()`.execute(db);
  await sql`CREATE TRIGGER announce_key_change AFTER INSERT OR UPDATE OR DELETE ON key_budgets FOR EACH ROW EXECUTE FUNCTION announce_key_change()`.execute(db);
  // A user's sightings (last_seen_at) are not changes worth announcing: only disabling and enabling are.
  await sql`
    CREATE TRIGGER announce_key_change AFTER UPDATE OF disabled_at ON users
    FOR EACH ROW WHEN (OLD.disabled_at IS DISTINCT FROM NEW.disabled_at) EXECUTE FUNCTION announce_key_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['api_keys', 'key_budgets', 'users']) await sql`DROP TRIGGER announce_key_change ON ${sql.table(table)}`.execute(db);
  await sql`DROP FUNCTION announce_key_change()`.execute(db);
  await sql`ALTER TABLE usage_records DROP COLUMN lease_id`.execute(db);
  await sql`DROP TABLE leases`.execute(db);
}
