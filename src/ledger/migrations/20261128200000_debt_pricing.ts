import { sql, type Kysely } from 'kysely';

/**
 * Debt beyond a hold, and the priced breakdown of each request.
 *
 * A request whose priced usage comes to more than its hold (an upstream that reports more than the
 * worst case: a prompt its tokenizer counts far above the gateway's, an answer past its ceiling) is
 * charged in full, as a capture after its hold expired is: the hold's `captured` may exceed its
 * amount, and the balance may go below zero by the difference. `usage_records.beyond_hold` is what
 * a capture took that no hold covered (all of it for a capture after its hold expired), so such
 * debts can be listed. `usage_records.pricing` keeps each attempt's priced lines (each kind of token
 * with its count and rate, the service tier and long-context tier, the price's source), so an invoice
 * can be recomputed; NULL for a record without priced usage (a release, a record written before).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE holds DROP CONSTRAINT holds_check, ADD CHECK (captured >= 0)`.execute(db);
  await sql`
    ALTER TABLE usage_records
      ADD COLUMN beyond_hold bigint NOT NULL DEFAULT 0 CHECK (beyond_hold >= 0),
      ADD COLUMN pricing jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE usage_records DROP COLUMN pricing, DROP COLUMN beyond_hold`.execute(db);
  await sql`ALTER TABLE holds DROP CONSTRAINT holds_captured_check, ADD CHECK (captured >= 0 AND captured <= amount)`.execute(db);
}
