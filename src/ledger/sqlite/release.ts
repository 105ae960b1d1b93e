import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { UsageRecordInput } from '../types.js';
import { toJson } from '../json.js';
import { inTransaction } from './transaction.js';
import { budgetReturn } from './budgets.js';

/** Pushes a pending hold's expiry (the heartbeat, see extend-hold.ts). */
export async function extendHold(db: Kysely<Database>, requestId: string, ttlMs: number): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`UPDATE holds SET expires_at = ${Date.now() + Math.ceil(ttlMs)} WHERE id = ${requestId} AND status = 'pending' RETURNING id`.execute(db);
  return rows.length > 0;
}

/** release on SQLite: the same moves in one transaction (the write lock is taken at BEGIN). */
export async function release(db: Kysely<Database>, requestId: string, record?: UsageRecordInput): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const now = new Date();
    const { rows: [h] } = await sql<{ account_id: string; amount: bigint }>`
      UPDATE holds SET status = 'released', resolved_at = ${now} WHERE id = ${requestId} AND status = 'pending'
      RETURNING account_id, amount`.execute(trx);
    if (!h) return false;
    await sql`UPDATE accounts SET held = held - ${h.amount} WHERE id = ${h.account_id}`.execute(trx);
    await budgetReturn(trx, requestId, h.amount, 0n);
    if (record) {
      await trx.insertInto('usage_records').values({
        request_id: requestId, account_id: h.account_id, key_id: record.keyId, model_requested: record.modelRequested, model_served: record.modelServed,
        attempts: toJson(record.attempts ?? []), input_no_cache: 0n, input_cache_read: 0n, input_cache_write: 0n, output_tokens: 0n, reasoning_tokens: 0n, cost: 0n, latency_ms: BigInt(Math.max(0, Math.round(record.latencyMs))), status: record.status,
        end_user: record.endUser ?? null, session_id: record.session ?? null, user_id: record.userId ?? null, created_at: now,
      }).execute();
    }
    return true;
  });
}

/**
 * A reaper batch on SQLite: one transaction, so no settle runs while it does (nothing to skip);
 * the data directory's lock keeps the ledger to one process, so one reaper.
 */
export async function reapBatch(db: Kysely<Database>, now: Date | undefined, batch: number): Promise<number> {
  return inTransaction(db, async (trx) => {
    const at = Date.now();
    const { rows } = await sql<{ id: string; account_id: string; amount: bigint }>`
      UPDATE holds SET status = 'expired', resolved_at = ${at}
      WHERE id IN (SELECT id FROM holds WHERE status = 'pending' AND expires_at <= ${now?.getTime() ?? at} ORDER BY expires_at LIMIT ${batch})
      RETURNING id, account_id, amount`.execute(trx);
    const perAccount = new Map<string, bigint>();
    for (const h of rows) {
      perAccount.set(h.account_id, (perAccount.get(h.account_id) ?? 0n) + h.amount);
      await budgetReturn(trx, h.id, h.amount, 0n);
    }
    for (const [id, amount] of perAccount) await sql`UPDATE accounts SET held = held - ${amount} WHERE id = ${id}`.execute(trx);
    return rows.length;
  });
}
