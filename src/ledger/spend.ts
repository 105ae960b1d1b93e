import type { LedgerStatements } from './statements.js';

export type SpendGroupBy = 'day' | 'model' | 'key' | 'user' | 'session';

export const SPEND_GROUPS: readonly SpendGroupBy[] = ['day', 'model', 'key', 'user', 'session'];

export interface SpendQuery {
  from: Date;
  /** Excluded. */
  to: Date;
  groupBy: SpendGroupBy;
  /** Only this account's usage (absent: every account's). */
  accountId?: string;
  /** Only this key's usage. */
  keyId?: string;
  /** One identity-provider user's usage. */
  userId?: string;
}

export interface SpendGroup {
  /** The UTC day (YYYY-MM-DD), model, key id, end user or session; null when the request named none. */
  group: string | null;
  requests: bigint;
  /** Every input token, cached ones included. */
  inputTokens: bigint;
  outputTokens: bigint;
  /** Input tokens read from the cache (part of inputTokens). */
  cachedTokens: bigint;
  cost: bigint;
}

/**
 * Sums the usage records of [from, to) by group, in one query on the (account or key, created_at)
 * indexes. Days ascending; other groups by cost descending (then by name, for a stable order).
 */
export async function spendSummary(s: LedgerStatements, q: SpendQuery): Promise<SpendGroup[]> {
  const rows = await s.spend(q);
  return rows.map((r) => ({ group: r.grp, requests: r.requests, inputTokens: r.input, outputTokens: r.output, cachedTokens: r.cached, cost: r.cost }));
}
