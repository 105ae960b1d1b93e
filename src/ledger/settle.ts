import { GatewayError } from '../ir/errors.js';
import type { Charge, SettleRequest } from './types.js';
import type { LedgerStatements } from './statements.js';

export interface SettleResult {
  /** What this request was charged in total (for a repeated settle: what the first one captured). */
  captured: bigint;
  /** True only for the call that resolved the hold. */
  settled: boolean;
}

/** What a request's charges come to: its capture. */
export function chargedTotal(charges: Charge[]): bigint {
  return charges.reduce((sum, c) => sum + c.cost, 0n);
}

/** Throws on a malformed charge (a negative cost, no model). */
export function checkCharges(charges: Charge[]): void {
  for (const [i, c] of charges.entries()) {
    if (c.cost < 0n) throw new GatewayError('invalid_request', `charge ${i} has a negative cost`);
    if (!c.model) throw new GatewayError('invalid_request', `charge ${i} has no model`);
  }
}

/**
 * Posts pending holds (and expired ones: a settle that arrives after the reaper released its hold,
 * because the database was away for longer than the hold's TTL, still captures the usage, which
 * may then take the balance below zero; see DECISIONS.md), in one statement (one transaction on
 * SQLite) for the whole batch (distinct request ids). For each request it marks the hold settled
 * (only if pending, so at most once), captures the sum of its costs, returns the hold to the
 * available balance, writes one journal `capture` line per charge with its tokens and the exact
 * balance after it, and the usage record (with its priced lines). A cost above the hold (usage the
 * worst case did not foresee) is captured in full, as a late capture is: the balance may go below
 * zero by the difference, the lines past the hold say 'charged beyond its hold', and the usage
 * record's `beyond_hold` says by how much. The key budgets the holds were placed on get the same
 * move: held -> spent (up to their limit), the rest returned. How each database runs it:
 * postgres/settle.ts and sqlite/settle.ts.
 */
export async function settleMany(s: LedgerStatements, items: SettleRequest[]): Promise<Array<SettleResult | Error>> {
  const results: Array<SettleResult | Error | undefined> = items.map(() => undefined);
  const valid: SettleRequest[] = [];
  const seen = new Set<string>();
  items.forEach((item, ord) => {
    if (seen.has(item.requestId)) {
      // The group commit never batches one request twice; the statement would count its charges twice.
      results[ord] = new GatewayError('conflict', `request ${item.requestId} is settled twice in one batch`);
      return;
    }
    seen.add(item.requestId);
    try {
      checkCharges(item.charges);
    } catch (e) {
      results[ord] = e as Error;
      return;
    }
    valid.push(item);
  });
  if (valid.length > 0) {
    const rows = await s.settle(valid);
    const settled = new Map(rows.map((row) => [row.id, row.captured]));
    for (const [ord, item] of items.entries()) {
      if (results[ord]) continue;
      const captured = settled.get(item.requestId);
      results[ord] = captured !== undefined ? { captured, settled: true } : await alreadyResolved(s, item.requestId);
    }
  }
  return results as Array<SettleResult | Error>;
}

/** The outcome of an earlier resolution; a settle with no hold at all is a caller bug, not a no-op. */
async function alreadyResolved(s: LedgerStatements, requestId: string): Promise<SettleResult | Error> {
  const hold = await s.db.selectFrom('holds').select(['captured']).where('id', '=', requestId).executeTakeFirst();
  if (!hold) return new GatewayError('not_found', `no hold for request ${requestId}`);
  return { captured: hold.captured, settled: false };
}
