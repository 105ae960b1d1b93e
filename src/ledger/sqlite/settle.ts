import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { SettleRequest } from '../types.js';
import type { SettledHold } from '../statements.js';
import { pricingJson, tokenCounts } from '../rows.js';
import { toJson } from '../json.js';
import { inTransaction } from './transaction.js';
import { chargedTotal } from '../settle.js';
import { budgetReturn } from './budgets.js';

/** How one request's captures are recorded (see recordCaptures). */
export interface Captures {
  accountId: string;
  /** The account's balance once every capture of the request is off it. */
  balanceAfter: bigint;
  /** What the request held (a line past it says 'charged beyond its hold'). */
  held: bigint;
  /** The reason of every line when the capture is a late one (its hold or lease had ended). */
  late?: string;
  /** What no hold covered (usage_records.beyond_hold). */
  beyond: bigint;
  /** The balance lease that served the request. */
  leaseId?: string;
  now: Date;
}

/**
 * One settled request's journal lines (one per charge, with the exact balance after each) and its
 * usage record: the journal and usage moves of the PostgreSQL statements, for one request.
 */
export async function recordCaptures(trx: Kysely<Database>, s: SettleRequest, c: Captures): Promise<void> {
  const cost = chargedTotal(s.charges);
  let balance = c.balanceAfter + cost;
  let before = 0n;
  const tokens = s.charges.map((ch) => tokenCounts(ch.usage));
  // Fixed statement texts, one per line: the query builder's compile step costs more than the insert.
  for (const [i, ch] of s.charges.entries()) {
    before += ch.cost;
    balance -= ch.cost;
    const t = tokens[i];
    const reason = c.late ?? (before > c.held ? 'charged beyond its hold' : null);
    await sql`
      INSERT INTO journal (account_id, kind, amount, balance_after, request_id, model, cost,
        input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens, reason, created_at)
      VALUES (${c.accountId}, 'capture', ${-ch.cost}, ${balance}, ${s.requestId}, ${ch.model}, ${ch.cost},
        ${t.inputNoCache}, ${t.inputCacheRead}, ${t.inputCacheWrite}, ${t.output}, ${t.reasoning}, ${reason}, ${c.now})`.execute(trx);
  }
  const total = (f: (t: (typeof tokens)[number]) => bigint) => tokens.reduce((sum, t) => sum + f(t), 0n);
  const r = s.record;
  await sql`
    INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
      input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens,
      cost, latency_ms, status, end_user, session_id, user_id, beyond_hold, pricing, lease_id, created_at)
    VALUES (${s.requestId}, ${c.accountId}, ${r.keyId}, ${r.modelRequested}, ${r.modelServed}, ${toJson(r.attempts ?? [])},
      ${total((t) => t.inputNoCache)}, ${total((t) => t.inputCacheRead)}, ${total((t) => t.inputCacheWrite)}, ${total((t) => t.output)}, ${total((t) => t.reasoning)},
      ${cost}, ${Math.max(0, Math.round(r.latencyMs))}, ${r.status}, ${r.endUser ?? null}, ${r.session ?? null}, ${r.userId ?? null}, ${c.beyond},
      ${pricingJson(s.charges)}, ${c.leaseId ?? null}, ${c.now})`.execute(trx);
}

/**
 * The batch on SQLite, in one transaction (the write lock is taken at BEGIN): per request, the
 * same moves as the statement above. The hold is settled only if pending (or expired: a late
 * capture), which is what makes it happen at most once; the capture is the whole cost, beyond the
 * hold when the usage came to more (the balance may go below zero); the account's held and balance move once; each charge gets its journal line, with the exact balance
 * after it; then the usage record and the key budgets.
 */
export async function settle(db: Kysely<Database>, valid: SettleRequest[]): Promise<SettledHold[]> {
  return inTransaction(db, async (trx) => {
    const now = new Date();
    const out: SettledHold[] = [];
    for (const s of valid) {
      const { rows: [h] } = await sql<{ account_id: string; amount: bigint; status: string }>`
        SELECT account_id, amount, status FROM holds WHERE id = ${s.requestId} AND status IN ('pending', 'expired')`.execute(trx);
      if (!h) continue;
      const late = h.status === 'expired';
      const cost = chargedTotal(s.charges);
      // The whole cost, beyond the hold when the usage came to more (a debt, recorded as such).
      const captured = cost;
      const beyond = late ? captured : captured > h.amount ? captured - h.amount : 0n;
      // An expired hold's amount already left held when the reaper expired it.
      const released = late ? 0n : h.amount;
      await sql`UPDATE holds SET status = 'settled', resolved_at = ${now}, captured = ${captured} WHERE id = ${s.requestId}`.execute(trx);
      const { rows: [a] } = await sql<{ balance: bigint }>`
        UPDATE accounts SET held = held - ${released}, balance = balance - ${captured} WHERE id = ${h.account_id} RETURNING balance`.execute(trx);
      await recordCaptures(trx, s, { accountId: h.account_id, balanceAfter: a.balance, held: h.amount, late: late ? 'captured after its hold expired' : undefined, beyond, now });
      await budgetReturn(trx, s.requestId, released, captured);
      out.push({ id: s.requestId, captured });
    }
    return out;
  });
}
