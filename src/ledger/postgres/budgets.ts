import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import type { HoldBudget } from '../types.js';
import type { BudgetUsageRow } from '../statements.js';
import { budgetOver } from '../hold-admission.js';
import { PERIOD_RULES } from '../budget-periods.js';

/*
 * The budget fragments the PostgreSQL statements share (see budgets.ts for the rule). Each takes
 * rows of holds (`id`, `key_id`, `amount`, `ord`, `budgets`) and reaches the budget tables by primary key.
 */

/** The usage row of a lifetime budget starts here (a timestamp every clock is past). */
const LIFETIME_START = sql<Date>`'-infinity'::timestamptz`;

/**
 * The start of the period `at` falls in, for the period and time zone given as SQL expressions:
 * each period's `date_trunc` on the zone's wall clock, from PERIOD_RULES (budget-periods.ts).
 */
export function periodStart(period: RawBuilder<unknown>, tz: RawBuilder<unknown>, at: RawBuilder<unknown>): RawBuilder<Date> {
  const cases = Object.entries(PERIOD_RULES).map(([name, rule]) => sql`WHEN ${sql.lit(name)} THEN date_trunc(${sql.lit(rule.truncateTo)}, ${at} AT TIME ZONE ${tz}) AT TIME ZONE ${tz}`);
  return sql<Date>`CASE ${period} ${sql.join(cases, sql` `)} WHEN 'lifetime' THEN ${LIFETIME_START} END`;
}

/** The start of the period after the one `at` falls in (NULL for lifetime): its start plus its length on the wall clock. */
export function periodEnd(period: RawBuilder<unknown>, tz: RawBuilder<unknown>, at: RawBuilder<unknown>): RawBuilder<Date | null> {
  const cases = Object.entries(PERIOD_RULES).map(
    ([name, { truncateTo, length }]) =>
      sql`WHEN ${sql.lit(name)} THEN (date_trunc(${sql.lit(truncateTo)}, ${at} AT TIME ZONE ${tz}) + make_interval(months => ${sql.lit(length.months)}, days => ${sql.lit(length.days)})) AT TIME ZONE ${tz}`,
  );
  return sql<Date | null>`CASE ${period} ${sql.join(cases, sql` `)} ELSE NULL END`;
}

/** Throws when PostgreSQL does not know the time zone (it decides where periods begin). */
export async function checkTimeZone(db: Kysely<Database>, tz: string): Promise<void> {
  await sql`SELECT now() AT TIME ZONE ${tz}`.execute(db);
}

/** A key's budgets with the usage of their periods at `at` (default the database's now). */
export async function budgetUsage(db: Kysely<Database>, keyId: string, at?: Date): Promise<BudgetUsageRow[]> {
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  const { rows } = await sql<BudgetUsageRow>`
    SELECT b.key_id AS owner, b.period, b.limit_amount, u.spent, u.held, ${periodEnd(sql.ref('b.period'), sql.ref('k.budget_time_zone'), now)} AS resets_at
    FROM key_budgets b JOIN api_keys k ON k.id = b.key_id
      LEFT JOIN budget_usage u ON u.owner = b.key_id AND u.period = b.period
        AND u.period_start = ${periodStart(sql.ref('b.period'), sql.ref('k.budget_time_zone'), now)}
    WHERE b.key_id = ${keyId}`.execute(db);
  return rows;
}

/** Budgets given with their owners (a user's, a group's) with the usage of their periods at `at`. */
export async function ownedBudgetUsage(db: Kysely<Database>, budgets: HoldBudget[], at?: Date): Promise<BudgetUsageRow[]> {
  if (budgets.length === 0) return [];
  const now = at ? sql`${at}::timestamptz` : sql`now()`;
  const { rows } = await sql<BudgetUsageRow>`
    SELECT b.owner, b.period, b.limit_amount, u.spent, u.held, ${periodEnd(sql.ref('b.period'), sql.ref('b.tz'), now)} AS resets_at
    FROM jsonb_to_recordset(${JSON.stringify(budgetRows(budgets))}::jsonb) AS b(owner text, period text, limit_amount bigint, tz text)
      LEFT JOIN budget_usage u ON u.owner = b.owner AND u.period = b.period
        AND u.period_start = ${periodStart(sql.ref('b.period'), sql.ref('b.tz'), now)}`.execute(db);
  return rows;
}

/** A hold's budgets besides its key's, as the JSON rows the statements unpack (bigints as exact strings). */
export function budgetRows(budgets: HoldBudget[] | undefined): object[] {
  return (budgets ?? []).map((b) => ({ owner: b.owner, period: b.period, limit_amount: b.limit.toString(), tz: b.timeZone }));
}

/**
 * The budgets each hold would take, one row per (hold, budget): its key's (key_budgets) and those
 * it carries (`budgets`, JSON rows: a user's and their groups'), the period each starts in and
 * whether it fits (`over`) as this statement's snapshot sees it, after the holds before it in the
 * batch (`ord`) on the same budget. A concurrent hold that commits first is caught by the usage
 * row's CHECK instead, when the hold writes it. `holds` has `id`, `key_id`, `amount`, `ord`, `budgets`.
 */
export function budgetCheck(holds: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    SELECT l.hold_id, l.owner, l.period, l.limit_amount, l.amount, p.period_start,
      ${budgetOver('u', sql`sum(l.amount) OVER (PARTITION BY l.owner, l.period ORDER BY l.ord ROWS UNBOUNDED PRECEDING)`, sql`l.limit_amount`)} AS over
    FROM (
      SELECT s.id AS hold_id, s.ord, s.amount, b.key_id AS owner, b.period, b.limit_amount, k.budget_time_zone AS tz
      FROM (${holds}) s JOIN key_budgets b ON b.key_id = s.key_id JOIN api_keys k ON k.id = b.key_id
      UNION ALL
      SELECT s.id, s.ord, s.amount, x.owner, x.period, x.limit_amount, x.tz
      FROM (${holds}) s
        CROSS JOIN LATERAL jsonb_to_recordset(coalesce(s.budgets, '[]'::jsonb)) AS x(owner text, period text, limit_amount bigint, tz text)
    ) l
      CROSS JOIN LATERAL (SELECT ${periodStart(sql.ref('l.period'), sql.ref('l.tz'), sql`now()`)} AS period_start) p
      LEFT JOIN budget_usage u ON u.owner = l.owner AND u.period = l.period AND u.period_start = p.period_start`;
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
      INSERT INTO budget_usage (owner, period, period_start, limit_amount, held)
      SELECT x.owner, x.period, x.period_start, max(x.limit_amount), sum(x.amount)
      FROM ${b} x JOIN ${p} ON ${p}.id = x.hold_id
      GROUP BY x.owner, x.period, x.period_start
      ON CONFLICT (owner, period, period_start)
        DO UPDATE SET held = budget_usage.held + excluded.held, limit_amount = excluded.limit_amount
      RETURNING 1
    ), budget_hold_rows AS (
      INSERT INTO budget_holds (hold_id, owner, period, period_start)
      SELECT x.hold_id, x.owner, x.period, x.period_start FROM ${b} x JOIN ${p} ON ${p}.id = x.hold_id
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
        SELECT bh.owner, bh.period, bh.period_start, sum(x.amount) AS amount, sum(x.captured) AS captured
        FROM ${r} x JOIN budget_holds bh ON bh.hold_id = x.id
        GROUP BY bh.owner, bh.period, bh.period_start
      ) g
      WHERE u.owner = g.owner AND u.period = g.period AND u.period_start = g.period_start
      RETURNING 1
    )`;
}
