import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { SettleRequest } from '../types.js';
import type { ExpiredLease, LeaseRenewal, LeaseState, LeaseTake } from '../statements.js';
import { toJson } from '../json.js';
import { available } from '../hold-admission.js';
import { captureJournal, chargeLines, recordRow } from './settle.js';

/**
 * The lease statements on PostgreSQL (the rules: leases.ts). Each locks the account row before the
 * lease's, as the settle statements do, so a renewal, a batch and the reaper never deadlock.
 */

export async function takeLease(db: Kysely<Database>, l: LeaseTake): Promise<{ available: bigint } | undefined> {
  const { rows } = await sql<{ available: bigint }>`/* prepared:take-lease */
    WITH a AS (
      UPDATE accounts SET held = accounts.held + ${l.amount}::bigint
      WHERE accounts.id = ${l.accountId} AND ${available('accounts')} >= greatest(${l.amount}::bigint, ${l.need}::bigint)
      RETURNING accounts.id, ${available('accounts')} AS available
    ), ins AS (
      INSERT INTO leases (id, account_id, instance, amount, expires_at)
      SELECT ${l.id}, a.id, ${l.instance}, ${l.amount}::bigint, now() + make_interval(secs => ${l.ttlMs}::float8 / 1000) FROM a
      RETURNING id
    )
    SELECT a.available FROM a JOIN ins ON true`.execute(db);
  return rows[0];
}

export async function renewLease(db: Kysely<Database>, r: LeaseRenewal): Promise<{ changed: boolean } | undefined> {
  const { rows } = await sql<{ changed: boolean }>`/* prepared:renew-lease */
    WITH lk AS (
      SELECT accounts.id FROM accounts WHERE accounts.id = (SELECT account_id FROM leases WHERE id = ${r.id}) FOR UPDATE
    ), l AS (
      SELECT leases.id, leases.account_id, leases.amount FROM leases JOIN lk ON lk.id = leases.account_id
      WHERE leases.id = ${r.id} AND leases.status = 'active' FOR UPDATE OF leases
    ), a AS (
      UPDATE accounts SET held = accounts.held + ${r.grow}::bigint FROM l
      WHERE accounts.id = l.account_id AND ${r.grow}::bigint <> 0 AND l.amount + ${r.grow}::bigint >= 0
        AND (${r.grow}::bigint < 0 OR ${available('accounts')} >= greatest(${r.grow}::bigint, ${r.need}::bigint))
      RETURNING accounts.id
    ), u AS (
      UPDATE leases SET amount = leases.amount + CASE WHEN EXISTS (SELECT 1 FROM a) THEN ${r.grow}::bigint ELSE 0 END,
        expires_at = now() + make_interval(secs => ${r.ttlMs}::float8 / 1000), in_flight = ${r.inFlight}::int,
        in_use = ${r.inUse}::bigint
      FROM l WHERE leases.id = l.id
      RETURNING leases.id
    )
    SELECT EXISTS (SELECT 1 FROM a) AS changed FROM u`.execute(db);
  return rows[0];
}

export async function endLease(db: Kysely<Database>, leaseId: string): Promise<bigint | undefined> {
  const { rows } = await sql<{ amount: bigint }>`/* prepared:end-lease */
    WITH lk AS (
      SELECT accounts.id FROM accounts WHERE accounts.id = (SELECT account_id FROM leases WHERE id = ${leaseId}) FOR UPDATE
    ), l AS (
      SELECT leases.id, leases.account_id, leases.amount FROM leases JOIN lk ON lk.id = leases.account_id
      WHERE leases.id = ${leaseId} AND leases.status = 'active' FOR UPDATE OF leases
    ), u AS (
      UPDATE leases SET status = 'returned', amount = 0, in_flight = 0, in_use = 0, resolved_at = now() FROM l WHERE leases.id = l.id
      RETURNING l.account_id, l.amount
    ), a AS (
      UPDATE accounts SET held = accounts.held - u.amount FROM u WHERE accounts.id = u.account_id
      RETURNING accounts.id
    )
    SELECT u.amount FROM u JOIN a ON true`.execute(db);
  return rows[0]?.amount;
}

/**
 * The batch of ended requests of leases, in one statement. Per request: its captures (the charges'
 * sum) come off the account's balance; what its hold covered (the capture up to the hold) comes off
 * the lease's amount and the account's held, when the lease is still active; beyond the hold is a
 * debt, as for an exact hold; the journal lines are chained per account (ordered by request id,
 * then charge) so each balance_after is exact; the usage record names the lease. A lease the reaper
 * ended meanwhile gave its whole amount back already: its requests' captures are late ones, off the
 * balance alone. Requests with a usage record already are skipped (a batch retried after a commit
 * whose answer was lost).
 */
export async function settleLeased(db: Kysely<Database>, items: SettleRequest[], leases: LeaseState[]): Promise<{ written: string[]; ended: string[] }> {
  const requests = items.map((s) => ({ ...recordRow(s), lease_id: s.lease!.id, account_id: s.lease!.accountId, held: s.lease!.held.toString() }));
  const states = leases.map((l) => ({ id: l.id, in_flight: l.inFlight, in_use: l.inUse.toString() }));
  const { rows } = await sql<{ id: string; ended: boolean }>`/* prepared:settle-leased */
    WITH r AS (
      SELECT * FROM jsonb_to_recordset(${toJson(requests)}::jsonb)
        AS x(id text, lease_id text, account_id text, held bigint, key_id text, model_requested text, model_served text, attempts jsonb,
          latency_ms bigint, status text, end_user text, session_id text, user_id text, pricing text)
    ), lf AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(states)}::jsonb) AS x(id text, in_flight int, in_use bigint)
    ), c AS (${chargeLines(items)}
    ), fresh AS (
      SELECT r.* FROM r WHERE NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.request_id = r.id)
    ), t AS (
      SELECT f.id, f.lease_id, f.account_id, f.held, coalesce(sum(c.cost), 0)::bigint AS cost,
        coalesce(sum(c.in_nc), 0) AS in_nc, coalesce(sum(c.in_cr), 0) AS in_cr, coalesce(sum(c.in_cw), 0) AS in_cw,
        coalesce(sum(c.out_total), 0) AS out_total, coalesce(sum(c.out_reason), 0) AS out_reason
      FROM fresh f LEFT JOIN c ON c.req = f.id GROUP BY f.id, f.lease_id, f.account_id, f.held
    ), lk AS (
      SELECT id FROM accounts WHERE id = ANY (ARRAY(SELECT account_id FROM t)) ORDER BY id FOR UPDATE
    ), pl AS (
      SELECT t.lease_id, sum(least(t.cost, t.held))::bigint AS covered FROM t GROUP BY t.lease_id
    ), l AS (
      UPDATE leases SET amount = leases.amount - pl.covered, in_flight = coalesce(lf.in_flight, leases.in_flight), in_use = coalesce(lf.in_use, leases.in_use)
      FROM pl LEFT JOIN lf ON lf.id = pl.lease_id
      WHERE leases.id = ANY (ARRAY(SELECT lease_id FROM pl)) AND leases.id = pl.lease_id AND leases.status = 'active'
        AND EXISTS (SELECT 1 FROM lk WHERE lk.id = leases.account_id)
      RETURNING leases.id
    ), tl AS (
      SELECT t.*, t.lease_id IN (SELECT id FROM l) AS active FROM t
    ), per AS (
      SELECT account_id, sum(cost)::bigint AS captured, coalesce(sum(least(cost, held)) FILTER (WHERE active), 0)::bigint AS released
      FROM tl GROUP BY account_id
    ), a AS (
      UPDATE accounts SET held = accounts.held - per.released, balance = accounts.balance - per.captured
      FROM per JOIN lk ON lk.id = per.account_id
      WHERE accounts.id = ANY (ARRAY(SELECT id FROM lk)) AND accounts.id = per.account_id
      RETURNING accounts.id, accounts.balance AS after_all
    ), lines AS (
      SELECT tl.account_id, NOT tl.active AS late, tl.held AS held_amount, c.* FROM tl JOIN c ON c.req = tl.id
    ), j AS (${captureJournal('lines', 'a', 'captured after its lease ended')}
    ), u AS (
      INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
        input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens,
        cost, latency_ms, status, end_user, session_id, user_id, beyond_hold, pricing, lease_id)
      SELECT r.id, tl.account_id, r.key_id, r.model_requested, r.model_served, r.attempts,
        tl.in_nc, tl.in_cr, tl.in_cw, tl.out_total, tl.out_reason, tl.cost, r.latency_ms, r.status, r.end_user, r.session_id, r.user_id,
        CASE WHEN tl.active THEN greatest(tl.cost - tl.held, 0) ELSE tl.cost END, r.pricing::jsonb, tl.lease_id
      FROM tl JOIN r ON r.id = tl.id JOIN a ON a.id = tl.account_id
    )
    SELECT tl.id, NOT tl.active AS ended FROM tl`.execute(db);
  return { written: rows.map((r) => r.id), ended: [...new Set(rows.filter((r) => r.ended).map((r) => items.find((s) => s.requestId === r.id)!.lease!.id))] };
}

/**
 * A reaper batch for leases: those past their expiry end, and what each still reserves goes back
 * to its account. One reaper at a time (the hold reaper's advisory lock pattern); accounts are
 * locked first, as every lease statement does.
 */
export async function reapLeases(db: Kysely<Database>, now: Date | undefined, batch: number): Promise<ExpiredLease[]> {
  const { rows } = await sql<ExpiredLease>`
    WITH lock AS (
      SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || ':switchyard-lease-reaper')) AS ok
    ), due AS (
      SELECT leases.id, leases.account_id FROM leases, lock
      WHERE lock.ok AND leases.status = 'active' AND leases.expires_at <= coalesce(${now ?? null}::timestamptz, now())
      ORDER BY leases.expires_at
      LIMIT ${batch}
    ), lk AS (
      SELECT id FROM accounts WHERE id = ANY (ARRAY(SELECT account_id FROM due)) ORDER BY id FOR UPDATE
    ), l AS (
      SELECT leases.id, leases.account_id, leases.instance, leases.amount, leases.in_flight FROM leases
      WHERE leases.id = ANY (ARRAY(SELECT id FROM due)) AND leases.status = 'active'
        AND leases.expires_at <= coalesce(${now ?? null}::timestamptz, now())
        AND EXISTS (SELECT 1 FROM lk WHERE lk.id = leases.account_id)
      FOR UPDATE OF leases
    ), u AS (
      UPDATE leases SET status = 'expired', resolved_at = now() FROM l WHERE leases.id = l.id
      RETURNING l.*
    ), per AS (
      SELECT account_id, sum(amount)::bigint AS amount FROM u GROUP BY account_id
    ), a AS (
      UPDATE accounts SET held = accounts.held - per.amount FROM per WHERE accounts.id = per.account_id
      RETURNING accounts.id
    )
    SELECT u.id, u.account_id, u.instance, u.amount, u.in_flight FROM u JOIN a ON a.id = u.account_id`.execute(db);
  return rows;
}

export async function leasedElsewhere(db: Kysely<Database>, accountId: string, instance: string): Promise<bigint> {
  const { rows } = await sql<{ amount: bigint }>`
    SELECT coalesce(sum(amount), 0)::bigint AS amount FROM leases WHERE account_id = ${accountId} AND status = 'active' AND instance <> ${instance}`.execute(db);
  return rows[0].amount;
}
