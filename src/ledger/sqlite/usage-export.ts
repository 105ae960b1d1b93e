import { sql, type Kysely } from 'kysely';
import type { Database, UsageRecordRow } from '../schema.js';

/**
 * The usage export's cursor on SQLite: the statements of ../postgres/usage-export.ts with this
 * process's clock (the one that stamps the usage records here) in epoch milliseconds.
 */
export async function claimUsageExport(db: Kysely<Database>, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const now = Date.now();
  const { rows } = await sql<{ name: string }>`
    INSERT INTO usage_exports AS e (name, holder, held_until) VALUES (${name}, ${holder}, ${now + ttlMs})
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, held_until = excluded.held_until
    WHERE e.holder IS NULL OR e.holder = excluded.holder OR e.held_until < ${now}
    RETURNING name`.execute(db);
  return rows.length > 0;
}

export async function usageToExport(db: Kysely<Database>, name: string, marginMs: number, limit: number): Promise<UsageRecordRow[]> {
  const { rows } = await sql<UsageRecordRow>`
    WITH e AS (SELECT after_created_at AS at, after_request_id AS id FROM usage_exports WHERE name = ${name})
    SELECT u.* FROM usage_records u
    WHERE u.created_at >= (SELECT at FROM e) AND (u.created_at > (SELECT at FROM e) OR u.request_id > (SELECT id FROM e))
      AND u.created_at < ${Date.now() - marginMs}
    ORDER BY u.created_at, u.request_id
    LIMIT ${limit}`.execute(db);
  return rows;
}

export async function advanceUsageExport(db: Kysely<Database>, name: string, holder: string, requestId: string, count: number, ttlMs: number): Promise<boolean> {
  const now = Date.now();
  const { rows } = await sql<{ name: string }>`
    UPDATE usage_exports AS e
    SET after_created_at = u.created_at, after_request_id = u.request_id, delivered = e.delivered + ${count},
      delivered_at = ${now}, held_until = ${now + ttlMs}
    FROM usage_records u
    WHERE e.name = ${name} AND e.holder = ${holder} AND u.request_id = ${requestId}
      AND (u.created_at > e.after_created_at OR (u.created_at = e.after_created_at AND u.request_id > e.after_request_id))
    RETURNING name`.execute(db);
  return rows.length > 0;
}
