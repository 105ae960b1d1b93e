import { sql, type RawBuilder } from 'kysely';

/**
 * The hold-admission rule, written once. A hold is admitted when
 * - its request id has no hold yet (the hold's id is the request id, so a retry cannot hold twice);
 * - its key, when given, belongs to the account and is live: not revoked, not expired (`keyOk`);
 * - each budget of its key has room for it (`budgetOver` is false), counting the key's holds before
 *   it in the batch;
 * - the account's available balance (`available`: balance - held) covers it, after the account's
 *   holds before it in the batch, re-checked on the account's row as it is written (`covers`).
 *
 * Every statement that places a hold composes these predicates: PostgreSQL's batch and single hold
 * (postgres/place-holds.ts, postgres/budgets.ts) and SQLite's transaction (sqlite/place-holds.ts,
 * sqlite/budgets.ts). Each takes SQL expressions, so a statement passes its own columns or its own
 * typed parameters. place-hold.ts turns the outcome into the answer.
 */

const col = (table: string, column: string) => sql.ref(`${table}.${column}`);

/** What the account row `account` can still hold. */
export function available(account: string): RawBuilder<bigint> {
  return sql<bigint>`${col(account, 'balance')} - ${col(account, 'held')}`;
}

/** The account row `account` covers `amount` (in an UPDATE's WHERE: tested on the row it locks). */
export function covers(account: string, amount: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`${available(account)} >= ${amount}`;
}

/** The key row `key` may move money at `now`. */
export function keyLive(key: string, now: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`${col(key, 'revoked_at')} IS NULL AND (${col(key, 'expires_at')} IS NULL OR ${col(key, 'expires_at')} > ${now})`;
}

/** No key is given, or `keyId` is a live key of `accountId`. */
export function keyOk(keyId: RawBuilder<unknown>, accountId: RawBuilder<unknown>, now: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`(${keyId} IS NULL OR EXISTS (
    SELECT 1 FROM api_keys k WHERE k.id = ${keyId} AND k.account_id = ${accountId} AND ${keyLive('k', now)}))`;
}

/**
 * The budget has no room: its period's usage row `usage` (absent: nothing used yet), plus `amount`
 * (the hold, with the key's holds before it in the batch), exceeds `limit`.
 */
export function budgetOver(usage: string, amount: RawBuilder<unknown>, limit: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`coalesce(${col(usage, 'spent')}, 0) + coalesce(${col(usage, 'held')}, 0) + ${amount} > ${limit}`;
}

/** A hold with this request id exists. */
export function duplicate(requestId: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM holds WHERE id = ${requestId})`;
}
