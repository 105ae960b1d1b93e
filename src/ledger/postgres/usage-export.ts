import { sql, type Kysely } from 'kysely';
import type { Database, UsageRecordRow } from '../schema.js';

/** `ms` from the statement's clock, as SQL. */
const fromNow = (ms: number) => sql`now() + make_interval(secs => ${ms}::float8 / 1000)`;

/**
 * Claims (or renews) an export for `holder` (see usage-export.ts), in one statement: the cursor row
 * is created at the ledger's start the first time; an existing one is taken only when it is free,
 * already this holder's, or its claim has lapsed. Two instances claiming at once queue on the row,
 * and the second sees the first's claim.
 */
export async function claimUsageExport(db: Kysely<Database>, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`
    INSERT INTO usage_exports AS e (name, holder, held_until) VALUES (${name}, ${holder}, ${fromNow(ttlMs)})
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, held_until = excluded.held_until
    WHERE e.holder IS NULL OR e.holder = excluded.holder OR e.held_until < now()
    RETURNING e.name`.execute(db);
  return rows.length > 0;
}

/**
 * The records after the cursor that are older than the margin by the database's clock, the one
 * that stamped them (created_at is now() of the inserting statement), in (created_at, request_id)
 * order. The cursor's values are the range's bounds (subqueries, so the range is read on
 * usage_records_created from the cursor on, not from the first record), compared in SQL: a
 * JavaScript Date would cut created_at's microseconds.
 */
export async function usageToExport(db: Kysely<Database>, name: string, marginMs: number, limit: number): Promise<UsageRecordRow[]> {
  const { rows } = await sql<UsageRecordRow>`
    WITH e AS (SELECT after_created_at AS at, after_request_id AS id FROM usage_exports WHERE name = ${name})
    SELECT u.* FROM usage_records u
    WHERE u.created_at >= (SELECT at FROM e) AND (u.created_at > (SELECT at FROM e) OR u.request_id > (SELECT id FROM e))
      AND u.created_at < ${fromNow(-marginMs)}
    ORDER BY u.created_at, u.request_id
    LIMIT ${limit}`.execute(db);
  return rows;
}

/** Moves the cursor to the record `requestId` if `holder` still holds the export and it is ahead of the cursor; renews the claim. */
export async function advanceUsageExport(db: Kysely<Database>, name: string, holder: string, requestId: string, count: number, ttlMs: number): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`
    UPDATE usage_exports AS e
    SET after_created_at = u.created_at, after_request_id = u.request_id, delivered = e.delivered + ${count},
      delivered_at = now(), held_until = ${fromNow(ttlMs)}
    FROM usage_records u
    WHERE e.name = ${name} AND e.holder = ${holder} AND u.request_id = ${requestId}
      AND (u.created_at > e.after_created_at OR (u.created_at = e.after_created_at AND u.request_id > e.after_request_id))
    RETURNING e.name`.execute(db);
  return rows.length > 0;
}
