import type { UsageRecordInput } from './types.js';
import type { LedgerStatements } from './statements.js';

/**
 * Voids a pending hold without charge (at most once: only a pending hold changes), returning it to
 * the account and to the key budgets it was placed on.
 * With a usage record, the request is still recorded, at cost 0, in the same statement.
 */
export function release(s: LedgerStatements, requestId: string, record?: UsageRecordInput): Promise<boolean> {
  return s.release(requestId, record);
}

/**
 * Expires pending holds past their deadline, in batches, each returned to its account and budgets.
 * Several instances never deadlock on the accounts they update (one reaper works at a time) and a
 * hold that a settle is resolving right now is left alone: see postgres/release.ts.
 */
export async function reapExpired(s: LedgerStatements, now?: Date, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await s.reapBatch(now, batch);
    total += n;
    if (n < batch) return total;
  }
}
