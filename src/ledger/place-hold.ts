import { GatewayError } from '../ir/errors.js';
import type { HoldRequest } from './types.js';
import { MONEY_UNIT } from './types.js';
import type { HoldOutcome, LedgerStatements } from './statements.js';
import { sqlState, UNIQUE_VIOLATION } from './db-errors.js';
import { budgetExceeded, hasBudgets, isBudgetViolation } from './budgets.js';

/**
 * Reserves each request's amount, in one statement (one transaction on SQLite) for the whole
 * batch, by the hold-admission rule (hold-admission.ts, written once and composed by each
 * database's statement: postgres/place-holds.ts, sqlite/place-holds.ts). A placed hold is answered
 * with the account's available balance right after it (for the ledger's HoldForecast); a refused
 * one with the reason, read afresh: a duplicate request id (409), a key no longer live (401), a
 * budget (402 budget_exceeded) or the balance (402).
 *
 * The key check is what lets the HTTP layer cache verified keys: a key revoked (or expired) after
 * it was cached can no longer move money, on any instance, from the moment its revocation commits.
 */
export async function placeHolds(s: LedgerStatements, holds: HoldRequest[]): Promise<Array<bigint | Error>> {
  const results: Array<bigint | Error | undefined> = holds.map(validate);
  const valid = holds.flatMap((h, ord) => (results[ord] ? [] : [{ ord, h }]));
  if (valid.length === 0) return results as Error[];
  let outcome: HoldOutcome[];
  try {
    outcome = await s.placeHolds(valid);
  } catch (e) {
    // Two concurrent holds with one id: the unique key rejects the second, atomically. In a batch
    // the group commit then runs each hold alone, so only the duplicate gets this answer.
    if (sqlState(e) === UNIQUE_VIOLATION && valid.length === 1) return [conflict(valid[0].h.requestId, e)];
    // A concurrent hold took the budget room this one's snapshot saw: the usage row's CHECK refused it.
    if (isBudgetViolation(e) && valid.length === 1 && hasBudgets(valid[0].h)) return [await budgetExceeded(s, valid[0].h)];
    throw e;
  }
  for (const row of outcome) {
    const h = holds[row.ord];
    if (row.placed) results[row.ord] = row.available!;
    else if (row.duplicate) results[row.ord] = conflict(h.requestId);
    else if (!row.key_ok) results[row.ord] = new GatewayError('authentication', 'invalid API key (unknown or revoked)', { code: 'invalid_api_key' });
    else if (!row.budget_ok && hasBudgets(h)) results[row.ord] = await overBudget(s, h, valid.length > 1);
    else results[row.ord] = await insufficient(s, h, valid.length > 1);
  }
  return results as Array<bigint | Error>;
}

function validate(h: HoldRequest): Error | undefined {
  if (h.amount <= 0n) return new GatewayError('invalid_request', `hold amount must be positive, got ${h.amount}`);
  if (!Number.isFinite(h.ttlMs) || h.ttlMs <= 0) return new GatewayError('invalid_request', 'hold ttl must be positive');
  return undefined;
}

function conflict(requestId: string, cause?: unknown): GatewayError {
  return new GatewayError('conflict', `a hold for request ${requestId} already exists`, { cause });
}

/**
 * The 402 of a budget. A hold refused in a batch is tried once more on its own when the budget has
 * room now: the batch counts every earlier candidate on the budget against it, including holds that
 * the balance then refused.
 */
async function overBudget(s: LedgerStatements, h: HoldRequest, fromBatch: boolean): Promise<bigint | Error> {
  const refusal = await budgetExceeded(s, h);
  if (fromBatch && refusal.details?.budget === undefined) return refusal;
  if (fromBatch && (refusal.details!.budget as { remaining: number }).remaining >= Number(h.amount)) return (await placeHolds(s, [h]))[0];
  return refusal;
}

/**
 * Builds the 402; reads the balance afresh (after the statement) so the numbers are current. A hold
 * refused in a batch (`fromBatch`) that the balance covers now is tried once more on its own: the
 * batch admits each account's holds in order while they fit, so a small hold behind a large one
 * that did not fit is refused there although the balance covers it (and a settle may have returned
 * money since).
 */
async function insufficient(s: LedgerStatements, h: HoldRequest, fromBatch: boolean): Promise<bigint | Error> {
  const row = await s.db
    .selectFrom('accounts')
    .select((eb) => [
      'balance',
      'held',
      eb.selectFrom('leases').select((l) => l.fn.coalesce(l.fn.sum<bigint>('amount'), l.lit(0)).as('s')).whereRef('leases.account_id', '=', 'accounts.id').where('status', '=', 'active').as('leased'),
    ])
    .where('id', '=', h.accountId)
    .executeTakeFirst();
  if (!row) return new GatewayError('not_found', `account ${h.accountId} not found`);
  const available = row.balance - row.held;
  if (fromBatch && available >= h.amount) {
    const [again] = await placeHolds(s, [h]);
    return again;
  }
  const refusal = new GatewayError(
    'insufficient_balance',
    `insufficient balance: this request needs ${h.amount} ${MONEY_UNIT} held but ${available} ${MONEY_UNIT} is available`,
    // JSON numbers, as money is everywhere on the API (exact below 2^53 nanodollars, $9M).
    { details: { available: Number(available), required: Number(h.amount), unit: MONEY_UNIT } },
  );
  LEASED_AT_REFUSAL.set(refusal, BigInt(row.leased ?? 0));
  return refusal;
}

/** What active balance leases reserved on the account when the balance refused a hold (read with the refusal's figures). */
const LEASED_AT_REFUSAL = new WeakMap<Error, bigint>();

/** The leases' reserve on the account when `refusal` was made; undefined for another error. */
export function leasedAtRefusal(refusal: unknown): bigint | undefined {
  return refusal instanceof Error ? LEASED_AT_REFUSAL.get(refusal) : undefined;
}
