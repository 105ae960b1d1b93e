import { sql, type Kysely } from 'kysely';

/**
 * A settle that arrives after the reaper expired its hold (the database was away longer than the
 * hold's TTL) still captures what the request used, so an answered request is never unbilled. Such
 * a capture is not covered by a hold any more and may take the balance below zero: the checks that
 * a balance (and a journal line's balance_after) is never negative, and that held never exceeds the
 * balance, become the hold's rule instead (placeHolds only holds what the available balance covers,
 * so an account below zero gets no new hold until it is topped up).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE accounts DROP CONSTRAINT accounts_balance_check, DROP CONSTRAINT held_within_balance`.execute(db);
  await sql`ALTER TABLE journal DROP CONSTRAINT journal_balance_after_check`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE journal ADD CONSTRAINT journal_balance_after_check CHECK (balance_after >= 0)`.execute(db);
  await sql`ALTER TABLE accounts ADD CONSTRAINT accounts_balance_check CHECK (balance >= 0), ADD CONSTRAINT held_within_balance CHECK (held <= balance)`.execute(db);
}
