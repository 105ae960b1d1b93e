import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { BudgetPeriod, Database } from './schema.js';
import { MONEY_UNIT } from './types.js';
import { CHECK_VIOLATION, sqlState, violatedCheck } from './db-errors.js';
import { isSqlite } from './dialect.js';
import { checkTimeZoneName, periodEndMs, periodStartMs } from './budget-periods.js';

/**
 * Spend budgets per key. A budget is a limit per calendar period (day, week from Monday, month, in
 * the key's time zone) or for the key's whole life. Enforced by the hold, like the balance: the
 * hold statement (place-hold.ts) adds its amount to `held` of each budget's current usage row, and
 * the row's CHECK (spent + held <= limit) refuses a hold that does not fit, atomically, however
 * many instances place holds at once. Settle moves the captured part to `spent` and returns the
 * rest; release and expiry return it all, always to the rows the hold was placed on (budget_holds).
 */

export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month', 'lifetime'];

/** The usage row of a lifetime budget starts here (a timestamp every clock is past). */
export const LIFETIME_START = sql<Date>`'-infinity'::timestamptz`;

/** The name of the CHECK that refuses a hold over a budget (see the migration). */
export const BUDGET_CONSTRAINT = 'budget_within_limit';

export interface KeyBudget {
  period: BudgetPeriod;
  /** Nanodollars per period. */
  limit: bigint;
}

export interface BudgetStatus extends KeyBudget {
  spent: bigint;
  held: bigint;
  /** limit - spent - held, never below 0. */
  remaining: bigint;
  /** When the next period starts; null for a lifetime budget. */
  resetsAt: Date | null;
}

/** The start of the period `at` falls in, for the period and time zone given as SQL expressions. */
export function periodStart(period: RawBuilder<unknown> | string, tz: RawBuilder<unknown> | string, at: RawBuilder<unknown>): RawBuilder<Date> {
  const p = typeof period === 'string' ? sql.ref(period) : period;
  const z = typeof tz === 'string' ? sql.ref(tz) : tz;
  return sql<Date>`CASE ${p} WHEN 'lifetime' THEN ${LIFETIME_START} ELSE date_trunc(${p}, ${at} AT TIME ZONE ${z}) AT TIME ZONE ${z} END`;
}

/** The start of the period after the one `at` falls in (NULL for lifetime). */
function periodEnd(period: string, tz: string, at: RawBuilder<unknown>): RawBuilder<Date | null> {
  const p = sql.ref(period);
  const z = sql.ref(tz);
  return sql<Date | null>`CASE ${p} WHEN 'lifetime' THEN NULL
    ELSE (date_trunc(${p}, ${at} AT TIME ZONE ${z}) + ('1 ' || ${p})::interval) AT TIME ZONE ${z} END`;
}

/** Refuses a list with a period twice or an unknown period (the API's schema checks the rest). */
export function checkBudgets(budgets: KeyBudget[]): void {
  const seen = new Set<string>();
  for (const b of budgets) {
    if (!BUDGET_PERIODS.includes(b.period)) throw new GatewayError('invalid_request', `unknown budget period "${b.period}"`, { param: 'budgets' });
    if (seen.has(b.period)) throw new GatewayError('invalid_request', `budgets: the ${b.period} budget is given twice (at most one per period)`, { param: 'budgets' });
    if (b.limit <= 0n) throw new GatewayError('invalid_request', 'budgets: a limit must be positive', { param: 'budgets' });
    seen.add(b.period);
  }
}

/** Refuses a time zone the database does not know (it decides where periods begin; on SQLite, JavaScript does). */
export async function checkTimeZone(db: Kysely<Database> | Transaction<Database>, tz: string): Promise<void> {
  try {
    if (isSqlite(db)) checkTimeZoneName(tz);
    else await sql`SELECT now() AT TIME ZONE ${tz}`.execute(db);
  } catch (e) {
    throw new GatewayError('invalid_request', `budget_time_zone: unknown time zone "${tz}" (an IANA name such as Europe/Paris)`, { param: 'budget_time_zone', cause: e });
  }
}

/** Replaces a key's budgets (in the caller's transaction). */
export async function replaceBudgets(trx: Transaction<Database>, keyId: string, budgets: KeyBudget[]): Promise<void> {
  await trx.deleteFrom('key_budgets').where('key_id', '=', keyId).execute();
  if (budgets.length === 0) return;
  await trx
    .insertInto('key_budgets')
    .values(budgets.map((b) => ({ key_id: keyId, period: b.period, limit_amount: b.limit })))
    .execute();
}

/** The budgets of these keys, by key id, in period order. */
export async function budgetsOf(db: Kysely<Database>, keyIds: string[]): Promise<Map<string, KeyBudget[]>> {
  const out = new Map<string, KeyBudget[]>();
  if (keyIds.length === 0) return out;
  const rows = await db.selectFrom('key_budgets').select(['key_id', 'period', 'limit_amount']).where('key_id', 'in', keyIds).execute();
  for (const r of rows) {
    const list = out.get(r.key_id) ?? [];
    list.push({ period: r.period, limit: r.limit_amount });
    out.set(r.key_id, list);
  }
  for (const list of out.values()) list.sort((a, b) => BUDGET_PERIODS.indexOf(a.period) - BUDGET_PERIODS.indexOf(b.period));
  return out;
}

/** A key's budgets in their current periods (at `at`, default now). */
export async function budgetStatus(db: Kysely<Database>, keyId: string, at?: Date): Promise<BudgetStatus[]> {
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  const { rows } = isSqlite(db)
    ? { rows: await budgetUsageSqlite(db, keyId, at?.getTime() ?? Date.now()) }
    : await sql<BudgetUsageRow>`
    SELECT b.period, b.limit_amount, u.spent, u.held, ${periodEnd('b.period', 'k.budget_time_zone', now)} AS resets_at
    FROM key_budgets b JOIN api_keys k ON k.id = b.key_id
      LEFT JOIN budget_usage u ON u.key_id = b.key_id AND u.period = b.period
        AND u.period_start = ${periodStart('b.period', 'k.budget_time_zone', now)}
    WHERE b.key_id = ${keyId}`.execute(db);
  return rows
    .map((r) => {
      const spent = r.spent ?? 0n;
      const held = r.held ?? 0n;
      const left = r.limit_amount - spent - held;
      return { period: r.period, limit: r.limit_amount, spent, held, remaining: left > 0n ? left : 0n, resetsAt: r.resets_at };
    })
    .sort((a, b) => BUDGET_PERIODS.indexOf(a.period) - BUDGET_PERIODS.indexOf(b.period));
}

/**
 * The 402 of a hold refused by a budget: names the tightest budget the hold does not fit, its
 * limit and when it resets (as `retry-after` too). Read after the statement, so the numbers are current.
 */
export async function budgetExceeded(db: Kysely<Database>, keyId: string, amount: bigint): Promise<GatewayError> {
  const status = await budgetStatus(db, keyId);
  const over = status.filter((b) => b.remaining < amount).sort((a, b) => (a.remaining < b.remaining ? -1 : 1))[0] ?? status[0];
  const resets = over?.resetsAt ? ` It resets at ${over.resetsAt.toISOString()}.` : over ? ' It does not reset.' : '';
  const message = over
    ? `budget exceeded: this key's ${over.period} budget of ${over.limit} ${MONEY_UNIT} has ${over.remaining} ${MONEY_UNIT} left (${over.spent} spent, ${over.held} held) and this request needs ${amount} ${MONEY_UNIT} held.${resets}`
    : `budget exceeded: this request needs ${amount} ${MONEY_UNIT} held, more than this key's budgets allow.`;
  const retryAfter = over?.resetsAt ? Math.max(1, Math.ceil((over.resetsAt.getTime() - Date.now()) / 1000)) : undefined;
  return new GatewayError('insufficient_balance', message, {
    code: 'budget_exceeded',
    retryAfter,
    details: over
      ? {
          budget: { period: over.period, limit: Number(over.limit), spent: Number(over.spent), held: Number(over.held), remaining: Number(over.remaining), resets_at: over.resetsAt?.toISOString() ?? null },
          required: Number(amount),
          unit: MONEY_UNIT,
        }
      : { required: Number(amount), unit: MONEY_UNIT },
  });
}

/** True when `e` is the budget CHECK refusing a hold that a concurrent one left no room for. */
export function isBudgetViolation(e: unknown): boolean {
  return sqlState(e) === CHECK_VIOLATION && violatedCheck(e) === BUDGET_CONSTRAINT;
}

/*
 * The fragments the ledger statements share. Each takes rows of holds (`id`, `key_id`, `amount`, `ord`)
 * and reaches the budget tables by primary key.
 */

/**
 * The budgets each hold would take, one row per (hold, budget): the period it starts in and
 * whether it fits (`over`) as this statement's snapshot sees it, after the key's holds before it
 * in the batch (`ord`). A concurrent hold that commits
 * first is caught by the usage row's CHECK instead, when the hold writes it.
 */
export function budgetCheck(holds: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    SELECT s.id AS hold_id, b.key_id, b.period, b.limit_amount, s.amount, p.period_start,
      coalesce(u.spent, 0) + coalesce(u.held, 0)
        + sum(s.amount) OVER (PARTITION BY b.key_id, b.period ORDER BY s.ord ROWS UNBOUNDED PRECEDING) > b.limit_amount AS over
    FROM (${holds}) s
      JOIN key_budgets b ON b.key_id = s.key_id
      JOIN api_keys k ON k.id = b.key_id
      CROSS JOIN LATERAL (SELECT ${periodStart('b.period', 'k.budget_time_zone', sql`now()`)} AS period_start) p
      LEFT JOIN budget_usage u ON u.key_id = b.key_id AND u.period = b.period AND u.period_start = p.period_start`;
}

/**
 * Adds the placed holds (`placed`: rows with `id`) to `held` of their budgets' usage rows (created
 * on a period's first hold) and records which rows each took. `bud` is budgetCheck's CTE. Two CTEs:
 * splice after the hold's INSERT.
 */
export function budgetTake(bud: string, placed: string): RawBuilder<unknown> {
  const b = sql.table(bud);
  const p = sql.table(placed);
  return sql`budget_take AS (
      INSERT INTO budget_usage (key_id, period, period_start, limit_amount, held)
      SELECT x.key_id, x.period, x.period_start, max(x.limit_amount), sum(x.amount)
      FROM ${b} x JOIN ${p} ON ${p}.id = x.hold_id
      GROUP BY x.key_id, x.period, x.period_start
      ON CONFLICT (key_id, period, period_start)
        DO UPDATE SET held = budget_usage.held + excluded.held, limit_amount = excluded.limit_amount
      RETURNING 1
    ), budget_hold_rows AS (
      INSERT INTO budget_holds (hold_id, key_id, period, period_start)
      SELECT x.hold_id, x.key_id, x.period, x.period_start FROM ${b} x JOIN ${p} ON ${p}.id = x.hold_id
      RETURNING 1
    )`;
}

/**
 * Returns resolved holds to their budgets: `resolved` is a CTE of holds with `id`, `amount`
 * (what leaves `held`: 0 for one that had already expired) and `captured` (what becomes `spent`).
 * A capture after expiry is not covered by a hold any more: it counts up to the limit, no further
 * (the account is charged in full). One CTE named budget_return.
 */
export function budgetReturn(resolved: string): RawBuilder<unknown> {
  const r = sql.table(resolved);
  return sql`budget_return AS (
      UPDATE budget_usage u
      SET held = u.held - g.amount, spent = LEAST(u.spent + g.captured, u.limit_amount - (u.held - g.amount))
      FROM (
        SELECT bh.key_id, bh.period, bh.period_start, sum(x.amount) AS amount, sum(x.captured) AS captured
        FROM ${r} x JOIN budget_holds bh ON bh.hold_id = x.id
        GROUP BY bh.key_id, bh.period, bh.period_start
      ) g
      WHERE u.key_id = g.key_id AND u.period = g.period AND u.period_start = g.period_start
      RETURNING 1
    )`;
}

/*
 * The same moves on SQLite, inside the caller's transaction (which holds the write lock): the
 * periods are computed in JavaScript (budget-periods.ts), one hold at a time.
 */

interface BudgetUsageRow {
  period: BudgetPeriod;
  limit_amount: bigint;
  spent: bigint | null;
  held: bigint | null;
  resets_at: Date | null;
}

/** A key's budgets with the usage of their periods at `atMs` (SQLite). */
async function budgetUsageSqlite(db: Kysely<Database> | Transaction<Database>, keyId: string, atMs: number): Promise<Array<BudgetUsageRow & { period_start: number }>> {
  const { rows } = await sql<{ period: BudgetPeriod; limit_amount: bigint; tz: string }>`
    SELECT b.period, b.limit_amount, k.budget_time_zone AS tz FROM key_budgets b JOIN api_keys k ON k.id = b.key_id
    WHERE b.key_id = ${keyId}`.execute(db);
  const out = [];
  for (const r of rows) {
    const start = periodStartMs(r.period, r.tz, atMs);
    const end = periodEndMs(r.period, r.tz, atMs);
    const { rows: usage } = await sql<{ spent: bigint; held: bigint }>`
      SELECT spent, held FROM budget_usage WHERE key_id = ${keyId} AND period = ${r.period} AND period_start = ${start}`.execute(db);
    out.push({ period: r.period, limit_amount: r.limit_amount, spent: usage[0]?.spent ?? null, held: usage[0]?.held ?? null, resets_at: end === null ? null : new Date(end), period_start: start });
  }
  return out;
}

/** The budgets a hold of `amount` would take (SQLite), and whether one of them has no room for it. */
export async function budgetCheckSqlite(trx: Transaction<Database>, keyId: string, amount: bigint, atMs: number): Promise<{ take: Array<{ period: BudgetPeriod; start: number; limit: bigint }>; over: boolean }> {
  const usage = await budgetUsageSqlite(trx, keyId, atMs);
  return {
    take: usage.map((u) => ({ period: u.period, start: u.period_start, limit: u.limit_amount })),
    over: usage.some((u) => (u.spent ?? 0n) + (u.held ?? 0n) + amount > u.limit_amount),
  };
}

/** Adds a placed hold to its budgets' usage rows and records which rows it took (SQLite). */
export async function budgetTakeSqlite(trx: Transaction<Database>, holdId: string, keyId: string, take: Array<{ period: BudgetPeriod; start: number; limit: bigint }>, amount: bigint): Promise<void> {
  for (const b of take) {
    await sql`
      INSERT INTO budget_usage (key_id, period, period_start, limit_amount, held) VALUES (${keyId}, ${b.period}, ${b.start}, ${b.limit}, ${amount})
      ON CONFLICT (key_id, period, period_start) DO UPDATE SET held = budget_usage.held + excluded.held, limit_amount = excluded.limit_amount`.execute(trx);
    await sql`INSERT INTO budget_holds (hold_id, key_id, period, period_start) VALUES (${holdId}, ${keyId}, ${b.period}, ${b.start})`.execute(trx);
  }
}

/** Returns a resolved hold to its budgets: `amount` leaves held, `captured` becomes spent (up to the limit), as budgetReturn (SQLite). */
export async function budgetReturnSqlite(trx: Transaction<Database>, holdId: string, amount: bigint, captured: bigint): Promise<void> {
  await sql`
    UPDATE budget_usage SET held = held - ${amount}, spent = min(spent + ${captured}, limit_amount - (held - ${amount}))
    WHERE (key_id, period, period_start) IN (SELECT key_id, period, period_start FROM budget_holds WHERE hold_id = ${holdId})`.execute(trx);
}
