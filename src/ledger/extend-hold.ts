import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { isSqlite } from './dialect.js';

/**
 * Pushes a pending hold's expiry to `ttlMs` from now: the heartbeat of a run that outlives one
 * TTL, so the reaper frees only holds whose process died. One statement; false when the hold is
 * no longer pending (already settled, released or reaped).
 */
export async function extendHold(db: Kysely<Database>, requestId: string, ttlMs: number): Promise<boolean> {
  const { rows } = isSqlite(db)
    ? await sql<{ id: string }>`UPDATE holds SET expires_at = ${Date.now() + Math.ceil(ttlMs)} WHERE id = ${requestId} AND status = 'pending' RETURNING id`.execute(db)
    : await sql<{ id: string }>`/* prepared:extend-hold */
    UPDATE holds SET expires_at = now() + make_interval(secs => ${ttlMs}::float8 / 1000)
    WHERE id = ${requestId} AND status = 'pending'
    RETURNING id`.execute(db);
  return rows.length > 0;
}
