import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { SettleRequest } from '../types.js';
import type { SettledHold } from '../statements.js';
import { pricingJson, tokenCounts } from '../rows.js';
import { toJson } from '../json.js';
import { inTransaction } from './transaction.js';
import { budgetReturn } from './budgets.js';

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
      const cost = s.charges.reduce((sum, c) => sum + c.cost, 0n);
      // The whole cost, beyond the hold when the usage came to more (a debt, recorded as such).
      const captured = cost;
      const beyond = late ? captured : captured > h.amount ? captured - h.amount : 0n;
      // An expired hold's amount already left held when the reaper expired it.
      const released = late ? 0n : h.amount;
      await sql`UPDATE holds SET status = 'settled', resolved_at = ${now}, captured = ${captured} WHERE id = ${s.requestId}`.execute(trx);
      const { rows: [a] } = await sql<{ balance: bigint }>`
        UPDATE accounts SET held = held - ${released}, balance = balance - ${captured} WHERE id = ${h.account_id} RETURNING balance`.execute(trx);
      let balance = a.balance + captured;
      let before = 0n;
      const tokens = s.charges.map((c) => tokenCounts(c.usage));
      // Fixed statement texts, one per line: the query builder's compile step costs more than the insert.
      for (const [i, c] of s.charges.entries()) {
        const taken = c.cost;
        before += c.cost;
        balance -= taken;
        const t = tokens[i];
        const reason = late ? 'captured after its hold expired' : before > h.amount ? 'charged beyond its hold' : null;
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
          cost, latency_ms, status, end_user, session_id, user_id, beyond_hold, pricing, created_at)
        VALUES (${s.requestId}, ${h.account_id}, ${r.keyId}, ${r.modelRequested}, ${r.modelServed}, ${toJson(r.attempts ?? [])},
          ${total((t) => t.inputNoCache)}, ${total((t) => t.inputCacheRead)}, ${total((t) => t.inputCacheWrite)}, ${total((t) => t.output)}, ${total((t) => t.reasoning)},
          ${captured}, ${Math.max(0, Math.round(r.latencyMs))}, ${r.status}, ${r.endUser ?? null}, ${r.session ?? null}, ${r.userId ?? null}, ${beyond}, ${pricingJson(s.charges)}, ${now})`.execute(trx);
      await budgetReturn(trx, s.requestId, released, captured);
      out.push({ id: s.requestId, captured });
    }
    return out;
  });
}
