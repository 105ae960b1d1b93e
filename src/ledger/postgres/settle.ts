import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import type { SettleRequest } from '../types.js';
import type { SettledHold } from '../statements.js';
import { pricingJson, tokenCounts } from '../rows.js';
import { toJson } from '../json.js';
import { budgetReturn } from './budgets.js';

/** A request's charges as JSON rows: bigints travel as exact strings. */
function chargeRows(requestId: string, s: SettleRequest): object[] {
  return s.charges.map((c, i) => {
    const t = tokenCounts(c.usage);
    return {
      req: requestId,
      ord: i,
      model: c.model,
      cost: c.cost.toString(),
      in_nc: t.inputNoCache.toString(),
      in_cr: t.inputCacheRead.toString(),
      in_cw: t.inputCacheWrite.toString(),
      out_total: t.output.toString(),
      out_reason: t.reasoning.toString(),
    };
  });
}

/**
 * The settle statement on PostgreSQL, for the whole batch (distinct request ids; the moves: see
 * settle.ts). Several requests of one account are summed into one update of the account, and their
 * journal lines are chained (ordered by request id, then charge) so each line's balance_after is
 * exact. Accounts are locked in id order. Tables are reached by `id = ANY (ARRAY(...))` index
 * lookups, as in the hold statement (see place-holds.ts).
 */
/**
 * The charges of a batch's requests as SQL rows (the settle statements' `c`): one per charge, with
 * `before`, what the request's earlier charges came to (for the 'charged beyond its hold' line).
 */
export function chargeLines(requests: SettleRequest[]): RawBuilder<unknown> {
  const rows = requests.flatMap((s) => chargeRows(s.requestId, s));
  return sql`
        SELECT x.*, coalesce(sum(x.cost) OVER (PARTITION BY x.req ORDER BY x.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS x(req text, ord int, model text, cost bigint, in_nc bigint, in_cr bigint, in_cw bigint, out_total bigint, out_reason bigint)`;
}

/**
 * The journal's capture lines of a batch (the settle statements' `j`): one per row of `lines` (a
 * charge, with its `account_id`, `late`, `held_amount` and chargeLines' columns), chained per
 * account in request-then-charge order back from `accounts`' `after_all` (each account's balance
 * once the batch's captures are off it), so each line's balance_after is exact. A late line says
 * `lateReason`; one past its hold, 'charged beyond its hold'.
 */
export function captureJournal(lines: string, accounts: string, lateReason: string): RawBuilder<unknown> {
  return sql`
        INSERT INTO journal (account_id, kind, amount, balance_after, request_id, model, cost,
          input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens, reason)
        SELECT l.account_id, 'capture', -l.cost,
          a.after_all + coalesce(sum(l.cost) OVER (
            PARTITION BY l.account_id ORDER BY l.req, l.ord ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0),
          l.req, l.model, l.cost, l.in_nc, l.in_cr, l.in_cw, l.out_total, l.out_reason,
          CASE WHEN l.late THEN ${sql.lit(lateReason)} WHEN l.before + l.cost > l.held_amount THEN 'charged beyond its hold' END
        FROM ${sql.table(lines)} l JOIN ${sql.table(accounts)} a ON a.id = l.account_id
        ORDER BY l.account_id, l.req, l.ord`;
}

/** A request's usage record as a JSON row (the settle statements' `r`). */
export function recordRow({ requestId, record: r, charges }: SettleRequest) {
  return {
    id: requestId,
    key_id: r.keyId,
    model_requested: r.modelRequested,
    model_served: r.modelServed,
    attempts: r.attempts ?? [],
    latency_ms: Math.max(0, Math.round(r.latencyMs)),
    status: r.status,
    end_user: r.endUser ?? null,
    session_id: r.session ?? null,
    user_id: r.userId ?? null,
    pricing: pricingJson(charges),
  };
}

export async function settle(db: Kysely<Database>, valid: SettleRequest[]): Promise<SettledHold[]> {
  const requests = valid.map(recordRow);
  const { rows } = await sql<SettledHold>`/* prepared:settle-many */
      WITH r AS (
        SELECT * FROM jsonb_to_recordset(${toJson(requests)}::jsonb)
          AS x(id text, key_id text, model_requested text, model_served text, attempts jsonb, latency_ms bigint, status text,
            end_user text, session_id text, user_id text, pricing text)
      ), c AS (${chargeLines(valid)}
      ), t AS (
        SELECT r.id, coalesce(sum(c.cost), 0) AS cost,
          coalesce(sum(c.in_nc), 0) AS in_nc, coalesce(sum(c.in_cr), 0) AS in_cr, coalesce(sum(c.in_cw), 0) AS in_cw,
          coalesce(sum(c.out_total), 0) AS out_total, coalesce(sum(c.out_reason), 0) AS out_reason
        FROM r LEFT JOIN c ON c.req = r.id GROUP BY r.id
      ), lk AS (
        SELECT id FROM accounts
        WHERE id = ANY (ARRAY(SELECT account_id FROM holds WHERE holds.id = ANY (ARRAY(SELECT id FROM r))))
        ORDER BY id FOR UPDATE
      ), hp AS (
        UPDATE holds SET status = 'settled', resolved_at = now(), captured = t.cost
        FROM t
        WHERE holds.id = ANY (ARRAY(SELECT id FROM r)) AND holds.id = t.id AND holds.status = 'pending'
        RETURNING holds.id, holds.account_id, holds.amount, holds.captured, false AS late
      ), he AS (
        UPDATE holds SET status = 'settled', resolved_at = now(), captured = t.cost
        FROM t
        WHERE holds.id = ANY (ARRAY(SELECT id FROM r)) AND holds.id = t.id AND holds.status = 'expired'
        RETURNING holds.id, holds.account_id, holds.amount, holds.captured, true AS late
      ), h AS (
        SELECT * FROM hp UNION ALL SELECT * FROM he
      ), hb AS (
        -- What each hold gives back to its key's budgets (an expired hold's amount already left held).
        SELECT id, CASE WHEN late THEN 0 ELSE amount END AS amount, captured FROM h
      ), ${budgetReturn('hb')}, per AS (
        -- An expired hold's amount already left held when the reaper expired it.
        SELECT account_id, sum(amount) FILTER (WHERE NOT late) AS amount, sum(captured) AS captured FROM h GROUP BY account_id
      ), a AS (
        UPDATE accounts SET held = accounts.held - coalesce(per.amount, 0), balance = accounts.balance - per.captured
        FROM per JOIN lk ON lk.id = per.account_id
        WHERE accounts.id = ANY (ARRAY(SELECT id FROM lk)) AND accounts.id = per.account_id
        RETURNING accounts.id, accounts.balance AS after_all
      ), lines AS (
        SELECT h.account_id, h.late, h.amount AS held_amount, c.* FROM h JOIN c ON c.req = h.id
      ), j AS (${captureJournal('lines', 'a', 'captured after its hold expired')}
      ), u AS (
        INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
          input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens,
          cost, latency_ms, status, end_user, session_id, user_id, beyond_hold, pricing)
        SELECT r.id, h.account_id, r.key_id, r.model_requested, r.model_served, r.attempts,
          t.in_nc, t.in_cr, t.in_cw, t.out_total, t.out_reason, h.captured, r.latency_ms, r.status, r.end_user, r.session_id, r.user_id,
          CASE WHEN h.late THEN h.captured ELSE GREATEST(h.captured - h.amount, 0) END, r.pricing::jsonb
        FROM h JOIN r ON r.id = h.id JOIN t ON t.id = h.id
      )
      SELECT id, captured FROM h`.execute(db);
  return rows;
}
