import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { HoldRequest } from '../types.js';
import type { HoldCandidate, HoldOutcome } from '../statements.js';
import { budgetCheck, budgetRows, budgetTake } from './budgets.js';
import { available, covers, duplicate, keyLive, keyOk } from '../hold-admission.js';

/**
 * The hold statement on PostgreSQL (the rule: place-hold.ts). Holds of one account are folded
 * into one update of its row: the statement locks the batch's accounts (in id order, so batches
 * running at once never deadlock) and reads their available balance as it stands then; the
 * candidates of an account are admitted in batch order while their running sum fits that balance.
 * The account's `held` then rises once, by the admitted sum, re-checked on the row
 * (`balance - held >= sum`). A busy account thus costs one row update per statement, not one per
 * request, and its requests never queue behind each other's row lock.
 *
 * Every table is reached through `id = ANY (ARRAY(...))`, an index lookup whatever the plan: the
 * statement is prepared, and a generic plan that guessed 100 rows from jsonb_to_recordset would
 * otherwise hash-join against a sequential scan of `holds`, a cost that grows with every request.
 *
 * The statement commits without waiting for its WAL to reach the disk (`synchronous_commit` off
 * for this transaction only), which takes the flush, the slowest part of the statement at low
 * load, off every request's path. Exactness is unchanged: the hold is visible to every other
 * transaction the moment it commits. Durability is deferred, not weakened where it matters: the
 * request's settle commits synchronously, and its flush carries the hold's earlier WAL with it.
 * A database crash can only lose the holds of requests still running, which then settle as "no
 * pending hold" and are not charged, as when the settle itself fails (DECISIONS.md).
 *
 * A hold alone in its statement (every hold at low load) runs `placeOne`, the same checks on one
 * row reached by its keys, without the JSON rows and the joins between them, which is most of the
 * latency a hold adds at one connection.
 *
 * Budgets ride in the same statement: a hold is a candidate only if it fits each budget of its
 * key and each it carries, a user's and their groups' (`bud`: the period's usage row plus the
 * running sum of the earlier holds in the batch on that budget),
 * and the placed holds are added to those usage rows (`budget_take`), whose CHECK refuses,
 * atomically, a hold that a concurrent statement left no room for.
 */
export async function placeHolds(db: Kysely<Database>, valid: HoldCandidate[]): Promise<HoldOutcome[]> {
  return valid.length === 1 ? placeOne(db, valid[0].ord, valid[0].h) : placeMany(db, valid);
}

/**
 * The batch: one row per hold, from JSON, joined against the accounts, keys and holds it touches.
 * `adm` is where an admission rule per row of another table would join (a per-key budget, say:
 * its own running sum per key, and an update of the key row beside `a`).
 */
async function placeMany(db: Kysely<Database>, valid: HoldCandidate[]): Promise<HoldOutcome[]> {
  const rows = JSON.stringify(
    valid.map(({ ord, h }) => ({ ord, id: h.requestId, account_id: h.accountId, key_id: h.keyId ?? null, budgets: budgetRows(h.budgets), amount: h.amount.toString(), ttl_ms: h.ttlMs })),
  );
  const result = await sql<HoldOutcome>`/* prepared:place-holds */
    WITH r AS (
      SELECT * FROM jsonb_to_recordset(${rows}::jsonb)
        AS x(ord int, id text, account_id text, key_id text, budgets jsonb, amount bigint, ttl_ms float8)
    ), lk AS (
      -- FOR UPDATE reads each account as its last committed writer left it, and holds it until commit.
      SELECT id, ${available('accounts')} AS available FROM accounts
      WHERE id = ANY (ARRAY(SELECT account_id FROM r)) ORDER BY id FOR UPDATE
    ), dup AS (
      SELECT id FROM holds WHERE id = ANY (ARRAY(SELECT id FROM r))
    ), live_keys AS (
      SELECT id, account_id FROM api_keys WHERE id = ANY (ARRAY(SELECT key_id FROM r)) AND ${keyLive('api_keys', sql`now()`)}
    ), checked AS (
      SELECT r.*, r.id IN (SELECT id FROM dup) AS duplicate,
        (r.key_id IS NULL OR (r.key_id, r.account_id) IN (SELECT id, account_id FROM live_keys)) AS key_ok
      FROM r
    ), bud AS (${budgetCheck(sql`SELECT id, key_id, amount, ord, budgets FROM checked WHERE NOT duplicate AND key_ok`)}
    ), cand AS (
      SELECT c.*, (sum(c.amount) OVER (PARTITION BY c.account_id ORDER BY c.ord ROWS UNBOUNDED PRECEDING))::bigint AS running
      FROM checked c WHERE NOT c.duplicate AND c.key_ok AND NOT EXISTS (SELECT 1 FROM bud WHERE bud.hold_id = c.id AND bud.over)
    ), adm AS (
      SELECT cand.*, lk.available - cand.running AS available
      FROM cand JOIN lk ON lk.id = cand.account_id
      WHERE lk.available >= cand.running -- covers, as the locked rows stand
    ), per AS (
      SELECT account_id, sum(amount)::bigint AS amount FROM adm GROUP BY account_id
    ), a AS (
      UPDATE accounts SET held = accounts.held + per.amount
      FROM per
      WHERE accounts.id = ANY (ARRAY(SELECT account_id FROM r)) AND accounts.id = per.account_id
        AND ${covers('accounts', sql`per.amount`)}
      RETURNING accounts.id
    ), ins AS (
      INSERT INTO holds (id, account_id, amount, expires_at)
      SELECT adm.id, adm.account_id, adm.amount, now() + make_interval(secs => adm.ttl_ms / 1000)
      FROM adm JOIN a ON a.id = adm.account_id
      RETURNING id
    ), ${budgetTake('bud', 'ins')}
    SELECT c.ord, ins.id IS NOT NULL AS placed, c.duplicate, c.key_ok,
      NOT EXISTS (SELECT 1 FROM bud WHERE bud.hold_id = c.id AND bud.over) AS budget_ok, adm.available
    FROM checked c LEFT JOIN ins ON ins.id = c.id LEFT JOIN adm ON adm.id = ins.id
      CROSS JOIN (SELECT set_config('synchronous_commit', 'off', true)) AS commit_without_flush`.execute(db);
  return result.rows;
}

/**
 * One hold: the same checks and answer as `placeMany`, each table reached by its primary key. The
 * UPDATE re-checks the balance on the row it locks, so concurrent holds stay exact. Unlike the
 * batch, which locks its accounts first, a hold that the committed balance cannot cover is refused
 * without waiting for a transaction that has the account's row locked: PostgreSQL tests the
 * condition before it takes the lock. A hold that the balance covers waits for the lock, and is
 * tested again on the row as that transaction left it.
 */
async function placeOne(db: Kysely<Database>, ord: number, h: HoldRequest): Promise<HoldOutcome[]> {
  const amount = h.amount.toString();
  const keyId = h.keyId ?? null;
  const { rows } = await sql<HoldOutcome>`/* prepared:place-hold-one */
    WITH checked AS (
      SELECT ${duplicate(sql`${h.requestId}::text`)} AS duplicate,
        ${keyOk(sql`${keyId}::text`, sql`${h.accountId}::text`, sql`now()`)} AS key_ok
    ), bud AS (${budgetCheck(sql`SELECT ${h.requestId}::text AS id, ${keyId}::text AS key_id, ${amount}::bigint AS amount, 0 AS ord, ${JSON.stringify(budgetRows(h.budgets))}::jsonb AS budgets`)}
    ), a AS (
      UPDATE accounts SET held = accounts.held + ${amount}::bigint
      FROM checked c
      WHERE accounts.id = ${h.accountId} AND NOT c.duplicate AND c.key_ok AND NOT EXISTS (SELECT 1 FROM bud WHERE bud.over)
        AND ${covers('accounts', sql`${amount}::bigint`)}
      RETURNING ${available('accounts')} AS available
    ), ins AS (
      INSERT INTO holds (id, account_id, amount, expires_at)
      SELECT ${h.requestId}, ${h.accountId}, ${amount}::bigint, now() + make_interval(secs => ${h.ttlMs}::float8 / 1000)
      FROM a
      RETURNING id
    ), ${budgetTake('bud', 'ins')}
    SELECT ${ord}::int AS ord, ins.id IS NOT NULL AS placed, c.duplicate, c.key_ok,
      NOT EXISTS (SELECT 1 FROM bud WHERE bud.over) AS budget_ok, a.available
    FROM checked c LEFT JOIN a ON true LEFT JOIN ins ON true
      CROSS JOIN (SELECT set_config('synchronous_commit', 'off', true)) AS commit_without_flush`.execute(db);
  return rows;
}

