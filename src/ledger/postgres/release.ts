import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { UsageRecordInput } from '../types.js';
import { toJson } from '../json.js';
import { budgetReturn } from './budgets.js';

/** Pushes a pending hold's expiry (the heartbeat, see extend-hold.ts). */
export async function extendHold(db: Kysely<Database>, requestId: string, ttlMs: number): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`/* prepared:extend-hold */
    UPDATE holds SET expires_at = now() + make_interval(secs => ${ttlMs}::float8 / 1000)
    WHERE id = ${requestId} AND status = 'pending'
    RETURNING id`.execute(db);
  return rows.length > 0;
}

/** Voids a pending hold (see release.ts), in one statement. */
export async function release(db: Kysely<Database>, requestId: string, record?: UsageRecordInput): Promise<boolean> {
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
            cost, latency_ms, status, end_user, session_id, user_id)
          SELECT ${requestId}, a.id, ${record.keyId}, ${record.modelRequested}, ${record.modelServed},
            ${toJson(record.attempts ?? [])}::jsonb, 0, ${Math.max(0, Math.round(record.latencyMs))},
            ${record.status}, ${record.endUser ?? null}, ${record.session ?? null}, ${record.userId ?? null}
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
 * A reaper batch. A per-schema advisory lock lets one reaper work at a time (others return 0 at
 * once), so several instances never deadlock on the accounts they update; SKIP LOCKED leaves holds
 * that a settle is resolving right now alone.
 */
export async function reapBatch(db: Kysely<Database>, now: Date | undefined, batch: number): Promise<number> {
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
