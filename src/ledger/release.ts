import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { UsageRecordInput } from './types.js';
import { toJson } from './json.js';
import { budgetReturn, budgetReturnSqlite } from './budgets.js';
import { isSqlite, sqliteTransaction } from './dialect.js';

/**
 * Voids a pending hold without charge (at most once: only a pending hold changes), returning it to
 * the account and to the key budgets it was placed on.
 * With a usage record, the request is still recorded, at cost 0, in the same statement.
 */
export async function release(db: Kysely<Database>, requestId: string, record?: UsageRecordInput): Promise<boolean> {
  if (isSqlite(db)) return releaseSqlite(db, requestId, record);
  const { rows } = record
    ? await sql<{ id: string }>`
        WITH h AS (
          UPDATE holds SET status = 'released', resolved_at = now()
          WHERE id = ${requestId} AND status = 'pending'
          RETURNING id, account_id, amount, 0::bigint AS captured
        ), a AS (
          UPDATE accounts SET held = accounts.held - h.amount FROM h
          WHERE accounts.id = h.account_id RETURNING accounts.id
        ), ${budgetReturn('h')}, u AS (
          INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
            cost, latency_ms, status, end_user, session_id)
          SELECT ${requestId}, a.id, ${record.keyId}, ${record.modelRequested}, ${record.modelServed},
            ${toJson(record.attempts ?? [])}::jsonb, 0, ${Math.max(0, Math.round(record.latencyMs))},
            ${record.status}, ${record.endUser ?? null}, ${record.session ?? null}
          FROM a
        )
        SELECT id FROM a`.execute(db)
    : await sql<{ id: string }>`
        WITH h AS (
          UPDATE holds SET status = 'released', resolved_at = now()
          WHERE id = ${requestId} AND status = 'pending'
          RETURNING id, account_id, amount, 0::bigint AS captured
        ), ${budgetReturn('h')}
        UPDATE accounts SET held = accounts.held - h.amount FROM h
        WHERE accounts.id = h.account_id RETURNING accounts.id`.execute(db);
  return rows.length > 0;
}

/**
 * Expires pending holds past their deadline, in batches. A per-schema advisory lock lets one
 * reaper work at a time (others return 0 at once), so several instances never deadlock on the
 * accounts they update; SKIP LOCKED leaves holds that a settle is resolving right now alone.
 */
export async function reapExpired(db: Kysely<Database>, now?: Date, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await reapBatch(db, now, batch);
    total += n;
    if (n < batch) return total;
  }
}

async function reapBatch(db: Kysely<Database>, now: Date | undefined, batch: number): Promise<number> {
  if (isSqlite(db)) return reapBatchSqlite(db, now, batch);
  const { rows } = await sql<{ n: bigint }>`
    WITH lock AS (
      SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || ':switchyard-reaper')) AS ok
    ), due AS (
      SELECT holds.id FROM holds, lock
      WHERE lock.ok AND holds.status = 'pending' AND holds.expires_at <= coalesce(${now ?? null}::timestamptz, now())
      ORDER BY holds.expires_at
      LIMIT ${batch}
      FOR UPDATE OF holds SKIP LOCKED
    ), h AS (
      UPDATE holds SET status = 'expired', resolved_at = now()
      FROM due WHERE holds.id = due.id AND holds.status = 'pending'
      RETURNING holds.id, holds.account_id, holds.amount, 0::bigint AS captured
    ), ${budgetReturn('h')}, per_account AS (
      SELECT account_id, sum(amount) AS amount FROM h GROUP BY account_id
    ), a AS (
      UPDATE accounts SET held = accounts.held - per_account.amount FROM per_account
      WHERE accounts.id = per_account.account_id
    )
    SELECT count(*) AS n FROM h`.execute(db);
  return Number(rows[0].n);
}

/** release on SQLite: the same moves in one transaction (the write lock is taken at BEGIN). */
async function releaseSqlite(db: Kysely<Database>, requestId: string, record?: UsageRecordInput): Promise<boolean> {
  return sqliteTransaction(db, async (trx) => {
    const now = new Date();
    const { rows: [h] } = await sql<{ account_id: string; amount: bigint }>`
      UPDATE holds SET status = 'released', resolved_at = ${now} WHERE id = ${requestId} AND status = 'pending'
      RETURNING account_id, amount`.execute(trx);
    if (!h) return false;
    await sql`UPDATE accounts SET held = held - ${h.amount} WHERE id = ${h.account_id}`.execute(trx);
    await budgetReturnSqlite(trx, requestId, h.amount, 0n);
    if (record) {
      await trx.insertInto('usage_records').values({
        request_id: requestId, account_id: h.account_id, key_id: record.keyId, model_requested: record.modelRequested, model_served: record.modelServed,
        attempts: toJson(record.attempts ?? []), input_no_cache: 0n, input_cache_read: 0n, input_cache_write: 0n, output_tokens: 0n, reasoning_tokens: 0n, cost: 0n, latency_ms: BigInt(Math.max(0, Math.round(record.latencyMs))), status: record.status,
        end_user: record.endUser ?? null, session_id: record.session ?? null, created_at: now,
      }).execute();
    }
    return true;
  });
}

/**
 * A reaper batch on SQLite: one transaction, so no settle runs while it does (nothing to skip);
 * the data directory's lock keeps the ledger to one process, so one reaper.
 */
async function reapBatchSqlite(db: Kysely<Database>, now: Date | undefined, batch: number): Promise<number> {
  return sqliteTransaction(db, async (trx) => {
    const at = Date.now();
    const { rows } = await sql<{ id: string; account_id: string; amount: bigint }>`
      UPDATE holds SET status = 'expired', resolved_at = ${at}
      WHERE id IN (SELECT id FROM holds WHERE status = 'pending' AND expires_at <= ${now?.getTime() ?? at} ORDER BY expires_at LIMIT ${batch})
      RETURNING id, account_id, amount`.execute(trx);
    const perAccount = new Map<string, bigint>();
    for (const h of rows) {
      perAccount.set(h.account_id, (perAccount.get(h.account_id) ?? 0n) + h.amount);
      await budgetReturnSqlite(trx, h.id, h.amount, 0n);
    }
    for (const [id, amount] of perAccount) await sql`UPDATE accounts SET held = held - ${amount} WHERE id = ${id}`.execute(trx);
    return rows.length;
  });
}
