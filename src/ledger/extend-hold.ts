import type { LedgerStatements } from './statements.js';

/**
 * Pushes a pending hold's expiry to `ttlMs` from now: the heartbeat of a run that outlives one
 * TTL, so the reaper frees only holds whose process died. One statement; false when the hold is
 * no longer pending (already settled, released or reaped).
 */
export function extendHold(s: LedgerStatements, requestId: string, ttlMs: number): Promise<boolean> {
  return s.extendHold(requestId, ttlMs);
}
