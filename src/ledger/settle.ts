import { sql, type Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { Database } from './schema.js';
import type { Charge, SettleRequest } from './types.js';
import { tokenCounts } from './rows.js';
import { toJson } from './json.js';
import { budgetReturn, budgetReturnSqlite } from './budgets.js';
import { isSqlite, sqliteTransaction } from './dialect.js';

export interface SettleResult {
  /** What this request was charged in total (for a repeated settle: what the first one captured). */
  captured: bigint;
  /** True only for the call that resolved the hold. */
  settled: boolean;
}

/** A request's charges as JSON rows: bigints travel as exact strings. Throws on a malformed charge. */
export function chargeRows(requestId: string, charges: Charge[]): object[] {
  return charges.map((c, i) => {
    if (c.cost < 0n) throw new GatewayError('invalid_request', `charge ${i} has a negative cost`);
    if (!c.model) throw new GatewayError('invalid_request', `charge ${i} has no model`);
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
 * Posts pending holds (and expired ones: a settle that arrives after the reaper released its hold,
 * because the database was away for longer than the hold's TTL, still captures the usage, which
 * may then take the balance below zero; see DECISIONS.md), in one statement for the whole batch (distinct request ids). For each
 * request it marks the hold settled (only if pending, so at most once), captures min(sum of its
 * costs, its hold), returns the rest to the available balance, writes one journal `capture` line
 * per charge with its tokens, and the usage record. Several requests of one account are summed
 * into one update of the account, and their journal lines are chained (ordered by request id,
 * then charge) so each line's balance_after is exact. Charges are captured in order; when the
 * hold caps them, the later lines carry less than their cost. Accounts are locked in id order.
 * Tables are reached by `id = ANY (ARRAY(...))` index lookups, as in placeHolds (see there). The
 * key budgets the holds were placed on get the same move: held -> spent, the rest returned.
 */
export async function settleMany(db: Kysely<Database>, items: SettleRequest[]): Promise<Array<SettleResult | Error>> {
  const results: Array<SettleResult | Error | undefined> = items.map(() => undefined);
  const requests: object[] = [];
  const charges: object[] = [];
  const valid: SettleRequest[] = [];
  const seen = new Set<string>();
  items.forEach((s, ord) => {
    if (seen.has(s.requestId)) {
      // The group commit never batches one request twice; the SQL would count its charges twice.
      results[ord] = new GatewayError('conflict', `request ${s.requestId} is settled twice in one batch`);
      return;
    }
    seen.add(s.requestId);
    try {
      charges.push(...chargeRows(s.requestId, s.charges));
    } catch (e) {
      results[ord] = e as Error;
      return;
    }
    valid.push(s);
    const r = s.record;
    requests.push({
      id: s.requestId,
      key_id: r.keyId,
      model_requested: r.modelRequested,
      model_served: r.modelServed,
      attempts: r.attempts ?? [],
      latency_ms: Math.max(0, Math.round(r.latencyMs)),
      status: r.status,
      end_user: r.endUser ?? null,
      session_id: r.session ?? null,
    });
  });
  if (requests.length > 0) {
    const { rows } = isSqlite(db) ? { rows: await settleSqlite(db, valid) } : await sql<{ id: string; captured: bigint }>`/* prepared:settle-many */
      WITH r AS (
        SELECT * FROM jsonb_to_recordset(${toJson(requests)}::jsonb)
          AS x(id text, key_id text, model_requested text, model_served text, attempts jsonb, latency_ms bigint, status text,
            end_user text, session_id text)
      ), c AS (
        SELECT x.*, coalesce(sum(x.cost) OVER (PARTITION BY x.req ORDER BY x.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM jsonb_to_recordset(${JSON.stringify(charges)}::jsonb)
          AS x(req text, ord int, model text, cost bigint, in_nc bigint, in_cr bigint, in_cw bigint, out_total bigint, out_reason bigint)
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
        UPDATE holds SET status = 'settled', resolved_at = now(), captured = LEAST(holds.amount, t.cost)
        FROM t
        WHERE holds.id = ANY (ARRAY(SELECT id FROM r)) AND holds.id = t.id AND holds.status = 'pending'
        RETURNING holds.id, holds.account_id, holds.amount, holds.captured, false AS late
      ), he AS (
        UPDATE holds SET status = 'settled', resolved_at = now(), captured = LEAST(holds.amount, t.cost)
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
        SELECT h.account_id, h.late, c.*, LEAST(h.captured, c.before + c.cost) - LEAST(h.captured, c.before) AS taken
        FROM h JOIN c ON c.req = h.id
      ), j AS (
        INSERT INTO journal (account_id, kind, amount, balance_after, request_id, model, cost,
          input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens, reason)
        SELECT l.account_id, 'capture', -l.taken,
          a.after_all + coalesce(sum(l.taken) OVER (
            PARTITION BY l.account_id ORDER BY l.req, l.ord ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0),
          l.req, l.model, l.cost, l.in_nc, l.in_cr, l.in_cw, l.out_total, l.out_reason,
          CASE WHEN l.late THEN 'captured after its hold expired' WHEN l.taken < l.cost THEN 'capped by the hold' END
        FROM lines l JOIN a ON a.id = l.account_id
        ORDER BY l.account_id, l.req, l.ord
      ), u AS (
        INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
          input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens,
          cost, latency_ms, status, end_user, session_id)
        SELECT r.id, h.account_id, r.key_id, r.model_requested, r.model_served, r.attempts,
          t.in_nc, t.in_cr, t.in_cw, t.out_total, t.out_reason, h.captured, r.latency_ms, r.status, r.end_user, r.session_id
        FROM h JOIN r ON r.id = h.id JOIN t ON t.id = h.id
      )
      SELECT id, captured FROM h`.execute(db);
    const settled = new Map(rows.map((row) => [row.id, row.captured]));
    for (const [ord, s] of items.entries()) {
      if (results[ord]) continue;
      const captured = settled.get(s.requestId);
      results[ord] = captured !== undefined ? { captured, settled: true } : await alreadyResolved(db, s.requestId);
    }
  }
  return results as Array<SettleResult | Error>;
}

/**
 * The batch on SQLite, in one transaction (the write lock is taken at BEGIN): per request, the
 * same moves as the statement above. The hold is settled only if pending (or expired: a late
 * capture), which is what makes it happen at most once; the capture is min(costs, hold); the
 * account's held and balance move once; each charge gets its journal line, with the exact balance
 * after it; then the usage record and the key budgets.
 */
async function settleSqlite(db: Kysely<Database>, valid: SettleRequest[]): Promise<Array<{ id: string; captured: bigint }>> {
  return sqliteTransaction(db, async (trx) => {
    const now = new Date();
    const out: Array<{ id: string; captured: bigint }> = [];
    for (const s of valid) {
      const { rows: [h] } = await sql<{ account_id: string; amount: bigint; status: string }>`
        SELECT account_id, amount, status FROM holds WHERE id = ${s.requestId} AND status IN ('pending', 'expired')`.execute(trx);
      if (!h) continue;
      const late = h.status === 'expired';
      const cost = s.charges.reduce((sum, c) => sum + c.cost, 0n);
      const captured = cost < h.amount ? cost : h.amount;
      // An expired hold's amount already left held when the reaper expired it.
      const released = late ? 0n : h.amount;
      await sql`UPDATE holds SET status = 'settled', resolved_at = ${now}, captured = ${captured} WHERE id = ${s.requestId}`.execute(trx);
      const { rows: [a] } = await sql<{ balance: bigint }>`
        UPDATE accounts SET held = held - ${released}, balance = balance - ${captured} WHERE id = ${h.account_id} RETURNING balance`.execute(trx);
      let balance = a.balance + captured;
      let before = 0n;
      const min = (x: bigint, y: bigint) => (x < y ? x : y);
      const tokens = s.charges.map((c) => tokenCounts(c.usage));
      // Fixed statement texts, one per line: the query builder's compile step costs more than the insert.
      for (const [i, c] of s.charges.entries()) {
        const taken = min(captured, before + c.cost) - min(captured, before);
        before += c.cost;
        balance -= taken;
        const t = tokens[i];
        const reason = late ? 'captured after its hold expired' : taken < c.cost ? 'capped by the hold' : null;
        await sql`
          INSERT INTO journal (account_id, kind, amount, balance_after, request_id, model, cost,
            input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens, reason, created_at)
          VALUES (${h.account_id}, 'capture', ${-taken}, ${balance}, ${s.requestId}, ${c.model}, ${c.cost},
            ${t.inputNoCache}, ${t.inputCacheRead}, ${t.inputCacheWrite}, ${t.output}, ${t.reasoning}, ${reason}, ${now})`.execute(trx);
      }
      const total = (f: (t: (typeof tokens)[number]) => bigint) => tokens.reduce((sum, t) => sum + f(t), 0n);
      const r = s.record;
      await sql`
        INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
          input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens,
          cost, latency_ms, status, end_user, session_id, created_at)
        VALUES (${s.requestId}, ${h.account_id}, ${r.keyId}, ${r.modelRequested}, ${r.modelServed}, ${toJson(r.attempts ?? [])},
          ${total((t) => t.inputNoCache)}, ${total((t) => t.inputCacheRead)}, ${total((t) => t.inputCacheWrite)}, ${total((t) => t.output)}, ${total((t) => t.reasoning)},
          ${captured}, ${Math.max(0, Math.round(r.latencyMs))}, ${r.status}, ${r.endUser ?? null}, ${r.session ?? null}, ${now})`.execute(trx);
      await budgetReturnSqlite(trx, s.requestId, released, captured);
      out.push({ id: s.requestId, captured });
    }
    return out;
  });
}

/** The outcome of an earlier resolution; a settle with no hold at all is a caller bug, not a no-op. */
async function alreadyResolved(db: Kysely<Database>, requestId: string): Promise<SettleResult | Error> {
  const hold = await db.selectFrom('holds').select(['captured']).where('id', '=', requestId).executeTakeFirst();
  if (!hold) return new GatewayError('not_found', `no hold for request ${requestId}`);
  return { captured: hold.captured, settled: false };
}
