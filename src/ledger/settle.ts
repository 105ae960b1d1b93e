import { sql, type Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { Database } from './schema.js';
import type { Charge, SettleRequest, UsageRecordInput } from './types.js';
import { tokenCounts } from './rows.js';
import { toJson } from './json.js';

export interface SettleResult {
  /** What this request was charged in total (for a repeated settle: what the first one captured). */
  captured: bigint;
  /** True only for the call that resolved the hold. */
  settled: boolean;
}

/** Charges as one JSON parameter: an empty list still works, and bigints travel as exact strings. */
export function chargesJson(charges: Charge[]): string {
  return JSON.stringify(
    charges.map((c, i) => {
      if (c.cost < 0n) throw new GatewayError('invalid_request', `charge ${i} has a negative cost`);
      if (!c.model) throw new GatewayError('invalid_request', `charge ${i} has no model`);
      const t = tokenCounts(c.usage);
      return {
        ord: i,
        model: c.model,
        cost: c.cost.toString(),
        in_nc: t.inputNoCache.toString(),
        in_cr: t.inputCacheRead.toString(),
        in_cw: t.inputCacheWrite.toString(),
        out_total: t.output.toString(),
        out_reason: t.reasoning.toString(),
      };
    }),
  );
}

/**
 * Posts a pending hold, in one statement: marks it settled (only if pending, so at most once),
 * captures min(sum of costs, hold), returns the rest to the available balance, writes one
 * journal `capture` line per charge with its tokens and exact balance_after, and the usage record.
 * Charges are captured in order; when the hold caps them, the later lines carry less than their cost.
 */
export async function settle(db: Kysely<Database>, s: SettleRequest): Promise<SettleResult> {
  const r: UsageRecordInput = s.record;
  const { rows } = await sql<{ captured: bigint }>`
    WITH c AS (
      SELECT x.*, coalesce(sum(x.cost) OVER (ORDER BY x.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
      FROM jsonb_to_recordset(${chargesJson(s.charges)}::jsonb)
        AS x(ord int, model text, cost bigint, in_nc bigint, in_cr bigint, in_cw bigint, out_total bigint, out_reason bigint)
    ), h AS (
      UPDATE holds SET status = 'settled', resolved_at = now(),
        captured = LEAST(amount, (SELECT coalesce(sum(cost), 0) FROM c))
      WHERE id = ${s.requestId} AND status = 'pending'
      RETURNING account_id, amount, captured
    ), a AS (
      UPDATE accounts SET held = accounts.held - h.amount, balance = accounts.balance - h.captured
      FROM h WHERE accounts.id = h.account_id
      RETURNING accounts.id, accounts.balance AS after_all, h.captured
    ), j AS (
      INSERT INTO journal (account_id, kind, amount, balance_after, request_id, model, cost,
        input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens, reason)
      SELECT a.id, 'capture',
        LEAST(a.captured, c.before) - LEAST(a.captured, c.before + c.cost),
        a.after_all + a.captured - LEAST(a.captured, c.before + c.cost),
        ${s.requestId}, c.model, c.cost, c.in_nc, c.in_cr, c.in_cw, c.out_total, c.out_reason,
        CASE WHEN LEAST(a.captured, c.before + c.cost) - LEAST(a.captured, c.before) < c.cost
          THEN 'capped by the hold' END
      FROM a CROSS JOIN c
      ORDER BY c.ord
    ), u AS (
      INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
        input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens,
        cost, latency_ms, status)
      SELECT ${s.requestId}, a.id, ${r.keyId}, ${r.modelRequested}, ${r.modelServed},
        ${toJson(r.attempts ?? [])}::jsonb,
        t.in_nc, t.in_cr, t.in_cw, t.out_total, t.out_reason,
        a.captured, ${Math.max(0, Math.round(r.latencyMs))}, ${r.status}
      FROM a CROSS JOIN (
        SELECT coalesce(sum(in_nc), 0) AS in_nc, coalesce(sum(in_cr), 0) AS in_cr, coalesce(sum(in_cw), 0) AS in_cw,
               coalesce(sum(out_total), 0) AS out_total, coalesce(sum(out_reason), 0) AS out_reason FROM c
      ) t
    )
    SELECT captured FROM a`.execute(db);
  if (rows[0]) return { captured: rows[0].captured, settled: true };
  return { captured: await alreadyResolved(db, s.requestId), settled: false };
}

/** The outcome of an earlier resolution; a settle with no hold at all is a caller bug, not a no-op. */
async function alreadyResolved(db: Kysely<Database>, requestId: string): Promise<bigint> {
  const hold = await db.selectFrom('holds').select(['captured']).where('id', '=', requestId).executeTakeFirst();
  if (!hold) throw new GatewayError('not_found', `no hold for request ${requestId}`);
  return hold.captured;
}
