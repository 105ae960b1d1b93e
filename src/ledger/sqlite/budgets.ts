import { sql, type Kysely, type Transaction } from 'kysely';
import type { BudgetPeriod, Database } from '../schema.js';
import type { BudgetUsageRow } from '../statements.js';
import { periodEndMs, periodStartMs } from '../budget-periods.js';
import { budgetOver } from '../hold-admission.js';

/*
 * The budget moves on SQLite (the rule: budgets.ts), inside the caller's transaction, which holds
 * the write lock: the periods are computed in JavaScript (budget-periods.ts), one hold at a time.
 */

type UsageAt = BudgetUsageRow & { period_start: number };

/** A key's budgets with the usage of their periods at `atMs`. */
export async function budgetUsage(db: Kysely<Database>, keyId: string, atMs: number): Promise<UsageAt[]> {
  const { rows } = await sql<{ period: BudgetPeriod; limit_amount: bigint; tz: string }>`
    SELECT b.period, b.limit_amount, k.budget_time_zone AS tz FROM key_budgets b JOIN api_keys k ON k.id = b.key_id
    WHERE b.key_id = ${keyId}`.execute(db);
  const out: UsageAt[] = [];
  for (const r of rows) {
    const start = periodStartMs(r.period, r.tz, atMs);
    const end = periodEndMs(r.period, r.tz, atMs);
    const { rows: usage } = await sql<{ spent: bigint; held: bigint }>`
      SELECT spent, held FROM budget_usage WHERE key_id = ${keyId} AND period = ${r.period} AND period_start = ${start}`.execute(db);
    out.push({ period: r.period, limit_amount: r.limit_amount, spent: usage[0]?.spent ?? null, held: usage[0]?.held ?? null, resets_at: end === null ? null : new Date(end), period_start: start });
  }
  return out;
}

export interface BudgetTake {
  period: BudgetPeriod;
  start: number;
  limit: bigint;
}

/** The budgets a hold of `amount` would take, and whether one of them has no room for it. */
export async function budgetCheck(trx: Transaction<Database>, keyId: string, amount: bigint, atMs: number): Promise<{ take: BudgetTake[]; over: boolean }> {
  const { rows } = await sql<{ period: BudgetPeriod; limit_amount: bigint; tz: string }>`
    SELECT b.period, b.limit_amount, k.budget_time_zone AS tz FROM key_budgets b JOIN api_keys k ON k.id = b.key_id
    WHERE b.key_id = ${keyId}`.execute(trx);
  const take: BudgetTake[] = [];
  let over = false;
  for (const r of rows) {
    const start = periodStartMs(r.period, r.tz, atMs);
    take.push({ period: r.period, start, limit: r.limit_amount });
    const { rows: [u] } = await sql<{ over: bigint }>`
      SELECT ${budgetOver('u', sql`${amount}`, sql`${r.limit_amount}`)} AS over
      FROM (SELECT 1) LEFT JOIN budget_usage u ON u.key_id = ${keyId} AND u.period = ${r.period} AND u.period_start = ${start}`.execute(trx);
    over ||= u.over === 1n;
  }
  return { take, over };
}

/** Adds a placed hold to its budgets' usage rows and records which rows it took. */
export async function budgetTake(trx: Transaction<Database>, holdId: string, keyId: string, take: BudgetTake[], amount: bigint): Promise<void> {
  for (const b of take) {
    await sql`
      INSERT INTO budget_usage (key_id, period, period_start, limit_amount, held) VALUES (${keyId}, ${b.period}, ${b.start}, ${b.limit}, ${amount})
      ON CONFLICT (key_id, period, period_start) DO UPDATE SET held = budget_usage.held + excluded.held, limit_amount = excluded.limit_amount`.execute(trx);
    await sql`INSERT INTO budget_holds (hold_id, key_id, period, period_start) VALUES (${holdId}, ${keyId}, ${b.period}, ${b.start})`.execute(trx);
  }
}

/** Returns a resolved hold to its budgets: `amount` leaves held, `captured` becomes spent (up to the limit). */
export async function budgetReturn(trx: Transaction<Database>, holdId: string, amount: bigint, captured: bigint): Promise<void> {
  await sql`
    UPDATE budget_usage SET held = held - ${amount}, spent = min(spent + ${captured}, limit_amount - (held - ${amount}))
    WHERE (key_id, period, period_start) IN (SELECT key_id, period, period_start FROM budget_holds WHERE hold_id = ${holdId})`.execute(trx);
}
