import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { isSqlite } from './dialect.js';

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

const GROUP_EXPR: Record<SpendGroupBy, RawBuilder<string | null>> = {
  day: sql`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  model: sql`coalesce(model_served, model_requested)`,
  key: sql`key_id`,
  user: sql`end_user`,
  session: sql`session_id`,
};

/** The UTC day on SQLite, where created_at is epoch milliseconds. */
const SQLITE_DAY = sql<string>`strftime('%Y-%m-%d', created_at / 1000, 'unixepoch')`;

/**
 * Sums the usage records of [from, to) by group, in one query on the (account or key, created_at)
 * indexes. Days ascending; other groups by cost descending (then by name, for a stable order).
 */
export async function spendSummary(db: Kysely<Database>, q: SpendQuery): Promise<SpendGroup[]> {
  const sqlite = isSqlite(db);
  const g = sqlite && q.groupBy === 'day' ? SQLITE_DAY : GROUP_EXPR[q.groupBy];
  const order = q.groupBy === 'day' ? sql`grp ASC` : sql`cost DESC, grp ASC NULLS LAST`;
  // SQLite's count and sum of INTEGER are 64-bit integers already; PostgreSQL's sum is numeric.
  const big = sqlite ? sql`` : sql`::bigint`;
  const { rows } = await sql<{ grp: string | null; requests: bigint; input: bigint; output: bigint; cached: bigint; cost: bigint }>`
    SELECT ${g} AS grp, count(*)${big} AS requests,
      coalesce(sum(input_no_cache + input_cache_read + input_cache_write), 0)${big} AS input,
      coalesce(sum(output_tokens), 0)${big} AS output,
      coalesce(sum(input_cache_read), 0)${big} AS cached,
      coalesce(sum(cost), 0)${big} AS cost
    FROM usage_records
    WHERE created_at >= ${q.from} AND created_at < ${q.to}
      ${q.accountId !== undefined ? sql`AND account_id = ${q.accountId}` : sql``}
      ${q.keyId !== undefined ? sql`AND key_id = ${q.keyId}` : sql``}
    GROUP BY 1
    ORDER BY ${order}`.execute(db);
  return rows.map((r) => ({ group: r.grp, requests: r.requests, inputTokens: r.input, outputTokens: r.output, cachedTokens: r.cached, cost: r.cost }));
}
