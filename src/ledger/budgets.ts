import type { Kysely, Transaction } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { BudgetPeriod, Database } from './schema.js';
import { MONEY_UNIT } from './types.js';
import { CHECK_VIOLATION, sqlState, violatedCheck } from './db-errors.js';
import type { BudgetUsageRow, LedgerStatements } from './statements.js';
import type { HoldBudget, HoldRequest } from './types.js';

/**
 * Spend budgets of keys, users and groups. A budget is a limit per calendar period (day, week from
 * Monday, month, in its time zone) or for its owner's whole life. A key's budgets are in the
 * ledger (key_budgets); a signed-in user's own and their groups' (the members together) come from
 * the identity policy in the config and travel with the hold (HoldRequest.budgets). Each is
 * enforced by the hold, like the balance: the hold statement (place-hold.ts) adds its amount to
 * `held` of each budget's current usage row, named by the budget's owner (the key's id, the user's,
 * or `group:` and the group's name), and the row's CHECK (spent + held <= limit) refuses a hold that
 * does not fit, atomically, however many instances place holds at once. A hold must fit every
 * budget it touches. Settle moves the captured part to `spent` and returns the rest; release and
 * expiry return it all, always to the rows the hold was placed on (budget_holds).
 */

export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month', 'lifetime'];

/** The name of the CHECK that refuses a hold over a budget (see the migration). */
export const BUDGET_CONSTRAINT = 'budget_within_limit';

export interface KeyBudget {
  period: BudgetPeriod;
  /** Nanodollars per period. */
  limit: bigint;
}

/** Whose budget: a key's, a signed-in user's own, or a group's (its members together). */
export type BudgetScope = 'key' | 'user' | 'group';

const GROUP_OWNER = 'group:';

/** The owner of a group's budget: the group's name as the identity provider's claim gives it. */
export function groupBudgetOwner(group: string): string {
  return `${GROUP_OWNER}${group}`;
}

/** Whose budget an owner is, and the group's name for a group's. */
export function budgetScope(owner: string): { scope: BudgetScope; group?: string } {
  if (owner.startsWith(GROUP_OWNER)) return { scope: 'group', group: owner.slice(GROUP_OWNER.length) };
  return { scope: owner.startsWith('usr_') ? 'user' : 'key' };
}

export interface BudgetStatus extends KeyBudget {
  /** The key's id, the user's, or `group:` and the group's name. */
  owner: string;
  spent: bigint;
  held: bigint;
  /** limit - spent - held, never below 0. */
  remaining: bigint;
  /** When the next period starts; null for a lifetime budget. */
  resetsAt: Date | null;
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
export async function checkTimeZone(s: LedgerStatements, tz: string): Promise<void> {
  try {
    await s.checkTimeZone(tz);
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
export async function budgetStatus(s: LedgerStatements, keyId: string, at?: Date): Promise<BudgetStatus[]> {
  return toStatus(await s.budgetUsage(keyId, at));
}

/** These budgets (a user's, their groups') in their current periods (at `at`, default now). */
export async function ownedBudgetStatus(s: LedgerStatements, budgets: HoldBudget[], at?: Date): Promise<BudgetStatus[]> {
  const rows = await s.ownedBudgetUsage(budgets, at);
  // In the order given (the user's own first, then each group's), each owner's by period.
  const order = new Map(budgets.map((b, i) => [b.owner, i]));
  return toStatus(rows).sort((a, b) => order.get(a.owner)! - order.get(b.owner)! || BUDGET_PERIODS.indexOf(a.period) - BUDGET_PERIODS.indexOf(b.period));
}

function toStatus(rows: BudgetUsageRow[]): BudgetStatus[] {
  return rows
    .map((r) => {
      const spent = r.spent ?? 0n;
      const held = r.held ?? 0n;
      const left = r.limit_amount - spent - held;
      return { owner: r.owner, period: r.period, limit: r.limit_amount, spent, held, remaining: left > 0n ? left : 0n, resetsAt: r.resets_at };
    })
    .sort((a, b) => BUDGET_PERIODS.indexOf(a.period) - BUDGET_PERIODS.indexOf(b.period));
}

/** Every budget a hold touches (its key's, then the user's and their groups'), in their current periods. */
export async function holdBudgetStatus(s: LedgerStatements, h: Pick<HoldRequest, 'keyId' | 'budgets'>): Promise<BudgetStatus[]> {
  return [...(h.keyId ? await budgetStatus(s, h.keyId) : []), ...(h.budgets?.length ? await ownedBudgetStatus(s, h.budgets) : [])];
}

/** True when the hold has a budget to fit. */
export function hasBudgets(h: Pick<HoldRequest, 'keyId' | 'budgets'>): boolean {
  return h.keyId !== undefined || (h.budgets?.length ?? 0) > 0;
}

/** "this key's", "this user's", "group \"eng\"'s". */
function whose(owner: string): string {
  const { scope, group } = budgetScope(owner);
  return scope === 'group' ? `group ${JSON.stringify(group)}'s` : `this ${scope}'s`;
}

/** A budget's state as the API shows it (in errors and balances): JSON numbers, as money is everywhere. */
export function budgetJson(b: BudgetStatus): Record<string, unknown> {
  const { scope, group } = budgetScope(b.owner);
  return {
    scope,
    ...(group !== undefined && { group }),
    period: b.period,
    limit: Number(b.limit),
    spent: Number(b.spent),
    held: Number(b.held),
    remaining: Number(b.remaining),
    resets_at: b.resetsAt?.toISOString() ?? null,
  };
}

/**
 * The 402 of a hold refused by a budget: names the tightest budget the hold does not fit (the
 * key's, the user's or a group's), its limit and when it resets (as `retry-after` too). Read after
 * the statement, so the numbers are current.
 */
export async function budgetExceeded(s: LedgerStatements, h: Pick<HoldRequest, 'keyId' | 'budgets' | 'amount'>): Promise<GatewayError> {
  const amount = h.amount;
  const status = await holdBudgetStatus(s, h);
  const over = status.filter((b) => b.remaining < amount).sort((a, b) => (a.remaining < b.remaining ? -1 : a.remaining > b.remaining ? 1 : 0))[0] ?? status[0];
  const resets = over?.resetsAt ? ` It resets at ${over.resetsAt.toISOString()}.` : over ? ' It does not reset.' : '';
  const message = over
    ? `budget exceeded: ${whose(over.owner)} ${over.period} budget of ${over.limit} ${MONEY_UNIT} has ${over.remaining} ${MONEY_UNIT} left (${over.spent} spent, ${over.held} held) and this request needs ${amount} ${MONEY_UNIT} held.${resets}`
    : `budget exceeded: this request needs ${amount} ${MONEY_UNIT} held, more than its budgets allow.`;
  const retryAfter = over?.resetsAt ? Math.max(1, Math.ceil((over.resetsAt.getTime() - Date.now()) / 1000)) : undefined;
  return new GatewayError('insufficient_balance', message, {
    code: 'budget_exceeded',
    retryAfter,
    details: over ? { budget: budgetJson(over), required: Number(amount), unit: MONEY_UNIT } : { required: Number(amount), unit: MONEY_UNIT },
  });
}

/** True when `e` is the budget CHECK refusing a hold that a concurrent one left no room for. */
export function isBudgetViolation(e: unknown): boolean {
  return sqlState(e) === CHECK_VIOLATION && violatedCheck(e) === BUDGET_CONSTRAINT;
}
