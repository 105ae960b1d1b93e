import { sql, type Kysely, type Transaction } from 'kysely';
import type { BudgetPeriod, Database } from '../schema.js';
import type { HoldBudget } from '../types.js';
import type { BudgetUsageRow } from '../statements.js';
import { periodEndMs, periodStartMs } from '../budget-periods.js';
import { budgetOver } from '../hold-admission.js';

/*
 * The budget moves on SQLite (the rule: budgets.ts), inside the caller's transaction, which holds
 * the write lock: the periods are computed in JavaScript (budget-periods.ts), one hold at a time.
 */

type UsageAt = BudgetUsageRow & { period_start: number };

/** A budget with its owner and where its periods begin. */
interface OwnedBudget {
  owner: string;
  period: BudgetPeriod;
  limit_amount: bigint;
  tz: string;
}

/** A key's budgets, as owned budgets. */
async function keyBudgets(db: Kysely<Database>, keyId: string): Promise<OwnedBudget[]> {
  const { rows } = await sql<OwnedBudget>`
    SELECT b.key_id AS owner, b.period, b.limit_amount, k.budget_time_zone AS tz FROM key_budgets b JOIN api_keys k ON k.id = b.key_id
    WHERE b.key_id = ${keyId}`.execute(db);
  return rows;
}

const given = (budgets: HoldBudget[]): OwnedBudget[] => budgets.map((b) => ({ owner: b.owner, period: b.period, limit_amount: b.limit, tz: b.timeZone }));

async function usageAt(db: Kysely<Database>, budgets: OwnedBudget[], atMs: number): Promise<UsageAt[]> {
  const out: UsageAt[] = [];
  for (const r of budgets) {
    const start = periodStartMs(r.period, r.tz, atMs);
    const end = periodEndMs(r.period, r.tz, atMs);
    const { rows: usage } = await sql<{ spent: bigint; held: bigint }>`
      SELECT spent, held FROM budget_usage WHERE owner = ${r.owner} AND period = ${r.period} AND period_start = ${start}`.execute(db);
    out.push({ owner: r.owner, period: r.period, limit_amount: r.limit_amount, spent: usage[0]?.spent ?? null, held: usage[0]?.held ?? null, resets_at: end === null ? null : new Date(end), period_start: start });
  }
  return out;
}

/** A key's budgets with the usage of their periods at `atMs`. */
export async function budgetUsage(db: Kysely<Database>, keyId: string, atMs: number): Promise<UsageAt[]> {
  return usageAt(db, await keyBudgets(db, keyId), atMs);
}

/** Budgets given with their owners (a user's, a group's) with the usage of their periods at `atMs`. */
export async function ownedBudgetUsage(db: Kysely<Database>, budgets: HoldBudget[], atMs: number): Promise<UsageAt[]> {
  return usageAt(db, given(budgets), atMs);
}

export interface BudgetTake {
  owner: string;
  period: BudgetPeriod;
  start: number;
  limit: bigint;
}

/**
 * The budgets a hold of `amount` would take (its key's, when it has one, and those it carries: a
 * user's and their groups'), and whether one of them has no room for it.
 */
export async function budgetCheck(trx: Transaction<Database>, keyId: string | null, carried: HoldBudget[], amount: bigint, atMs: number): Promise<{ take: BudgetTake[]; over: boolean }> {
  const budgets = [...(keyId === null ? [] : await keyBudgets(trx, keyId)), ...given(carried)];
  const take: BudgetTake[] = [];
  let over = false;
  for (const r of budgets) {
    const start = periodStartMs(r.period, r.tz, atMs);
    take.push({ owner: r.owner, period: r.period, start, limit: r.limit_amount });
    const { rows: [u] } = await sql<{ over: bigint }>`
      SELECT ${budgetOver('u', sql`${amount}`, sql`${r.limit_amount}`)} AS over
      FROM (SELECT 1) LEFT JOIN budget_usage u ON u.owner = ${r.owner} AND u.period = ${r.period} AND u.period_start = ${start}`.execute(trx);
    over ||= u.over === 1n;
  }
  return { take, over };
}

/** Adds a placed hold to its budgets' usage rows and records which rows it took. */
export async function budgetTake(trx: Transaction<Database>, holdId: string, take: BudgetTake[], amount: bigint): Promise<void> {
  for (const b of take) {
    await sql`
      INSERT INTO budget_usage (owner, period, period_start, limit_amount, held) VALUES (${b.owner}, ${b.period}, ${b.start}, ${b.limit}, ${amount})
      ON CONFLICT (owner, period, period_start) DO UPDATE SET held = budget_usage.held + excluded.held, limit_amount = excluded.limit_amount`.execute(trx);
    await sql`INSERT INTO budget_holds (hold_id, owner, period, period_start) VALUES (${holdId}, ${b.owner}, ${b.period}, ${b.start})`.execute(trx);
  }
}

/** Returns a resolved hold to its budgets: `amount` leaves held, `captured` becomes spent (up to the limit). */
export async function budgetReturn(trx: Transaction<Database>, holdId: string, amount: bigint, captured: bigint): Promise<void> {
  await sql`
    UPDATE budget_usage SET held = held - ${amount}, spent = min(spent + ${captured}, limit_amount - (held - ${amount}))
    WHERE (owner, period, period_start) IN (SELECT owner, period, period_start FROM budget_holds WHERE hold_id = ${holdId})`.execute(trx);
}
