import { sql, type Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { Database } from './schema.js';
import type { JournalEntry, UsageFilter, UsageRecord } from './types.js';
import { toJournalEntry, toUsageRecord } from './rows.js';

/** Newest first; with `beforeId`, the entries older than that journal id (the next page). */
export async function ledgerEntries(db: Kysely<Database>, accountId: string, limit = 100, beforeId?: bigint): Promise<JournalEntry[]> {
  let q = db.selectFrom('journal').selectAll().where('account_id', '=', accountId);
  if (beforeId !== undefined) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toJournalEntry);
}

/**
 * Newest first; with `beforeRequestId`, the records older than that one (the next page). A record
 * that is not the account's is a 400 naming `before_id`, not a silently empty page.
 */
export async function usageRecords(
  db: Kysely<Database>,
  accountId: string,
  limit = 100,
  beforeRequestId?: string,
  filter: UsageFilter = {},
): Promise<UsageRecord[]> {
  let q = db.selectFrom('usage_records').selectAll().where('account_id', '=', accountId);
  if (filter.endUser !== undefined) q = q.where('end_user', '=', filter.endUser);
  if (filter.session !== undefined) q = q.where('session_id', '=', filter.session);
  if (filter.keyId !== undefined) q = q.where('key_id', '=', filter.keyId);
  if (filter.model !== undefined) {
    const model = filter.model;
    q = q.where((eb) => eb.or([eb('model_requested', '=', model), eb('model_served', '=', model)]));
  }
  if (filter.from !== undefined) q = q.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('created_at', '<', filter.to);
  if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
  if (beforeRequestId !== undefined) {
    const cursor = await db
      .selectFrom('usage_records')
      .select('request_id')
      .where('request_id', '=', beforeRequestId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!cursor) throw new GatewayError('invalid_request', `no usage record "${beforeRequestId}" in this account`, { param: 'before_id' });
    q = q.where(createdBefore('usage_records', 'request_id', beforeRequestId));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('request_id', 'desc').limit(limit).execute();
  return rows.map(toUsageRecord);
}

/** The tables listed newest first by `created_at`, with the id column that breaks ties. */
interface PagedById {
  accounts: 'id';
  usage_records: 'request_id';
}

/**
 * Rows of `table` older than the row `id` names, in the newest-first order (`created_at`, then the
 * id) that the paged lists use. Compared in SQL: a JavaScript Date would cut created_at's
 * microseconds and skip rows.
 */
export function createdBefore<T extends keyof PagedById>(table: T, idColumn: PagedById[T], id: string) {
  return sql<boolean>`(created_at, ${sql.ref(idColumn)}) < (SELECT created_at, ${sql.ref(idColumn)} FROM ${sql.table(table)} WHERE ${sql.ref(idColumn)} = ${id})`;
}

/**
 * Checks the projections against their sources in one snapshot: balance = sum of the journal,
 * held = sum of pending holds and active leases, each journal line's balance_after = running sum,
 * captures = settled holds (or, for a request served from a lease, its usage record's cost), and
 * each key budget row's held = its pending holds, its spent at most what its settled holds captured.
 */
export async function balanceCheck(db: Kysely<Database>): Promise<{ ok: boolean; problems: string[] }> {
  const { rows } = await sql<{ problem: string }>`
    WITH j AS (
      SELECT account_id, id, amount, balance_after,
        sum(amount) OVER (PARTITION BY account_id ORDER BY id) AS running
      FROM journal
    ), sums AS (
      SELECT account_id, sum(amount) AS total FROM journal GROUP BY account_id
    ), pending AS (
      SELECT account_id, sum(total) AS total FROM (
        SELECT account_id, amount AS total FROM holds WHERE status = 'pending'
        UNION ALL SELECT account_id, amount FROM leases WHERE status = 'active'
      ) reserved GROUP BY account_id
    ), captures AS (
      SELECT request_id, -sum(amount) AS total FROM journal WHERE kind = 'capture' GROUP BY request_id
    ), budget_pending AS (
      SELECT bh.owner, bh.period, bh.period_start, sum(h.amount) AS total
      FROM budget_holds bh JOIN holds h ON h.id = bh.hold_id AND h.status = 'pending'
      GROUP BY bh.owner, bh.period, bh.period_start
    ), budget_spent AS (
      SELECT bh.owner, bh.period, bh.period_start, sum(h.captured) AS total
      FROM budget_holds bh JOIN holds h ON h.id = bh.hold_id AND h.status = 'settled'
      GROUP BY bh.owner, bh.period, bh.period_start
    )
    SELECT 'account ' || a.id || ': balance ' || a.balance || ' but journal sums to ' || coalesce(s.total, 0) AS problem
      FROM accounts a LEFT JOIN sums s ON s.account_id = a.id WHERE a.balance <> coalesce(s.total, 0)
    UNION ALL
    SELECT 'account ' || a.id || ': held ' || a.held || ' but pending holds and active leases sum to ' || coalesce(p.total, 0)
      FROM accounts a LEFT JOIN pending p ON p.account_id = a.id WHERE a.held <> coalesce(p.total, 0)
    UNION ALL
    SELECT 'account ' || a.id || ': negative held ' || a.held
      FROM accounts a WHERE a.held < 0
    UNION ALL
    SELECT 'journal ' || j.id || ': balance_after ' || j.balance_after || ' but running sum is ' || j.running
      FROM j WHERE j.balance_after <> j.running
    UNION ALL
    SELECT 'hold ' || h.id || ': captured ' || h.captured || ' but journal captures ' || coalesce(c.total, 0)
      FROM holds h LEFT JOIN captures c ON c.request_id = h.id WHERE h.captured <> coalesce(c.total, 0)
    UNION ALL
    SELECT 'budget ' || u.owner || ' ' || u.period || ': held ' || u.held || ' but pending holds sum to ' || coalesce(p.total, 0)
      FROM budget_usage u LEFT JOIN budget_pending p USING (owner, period, period_start) WHERE u.held <> coalesce(p.total, 0)
    UNION ALL
    -- A capture after its hold expired counts only up to the limit (DECISIONS.md), so spent may be less.
    SELECT 'budget ' || u.owner || ' ' || u.period || ': spent ' || u.spent || ' but its settled holds captured ' || coalesce(s.total, 0)
      FROM budget_usage u LEFT JOIN budget_spent s USING (owner, period, period_start) WHERE u.spent > coalesce(s.total, 0)
    UNION ALL
    SELECT 'capture for ' || c.request_id || ' has no settled hold nor a leased usage record'
      FROM captures c LEFT JOIN holds h ON h.id = c.request_id
      WHERE h.status IS DISTINCT FROM 'settled' AND NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.request_id = c.request_id AND u.lease_id IS NOT NULL)
    UNION ALL
    SELECT 'leased request ' || u.request_id || ': cost ' || u.cost || ' but journal captures ' || coalesce(c.total, 0)
      FROM usage_records u LEFT JOIN captures c ON c.request_id = u.request_id WHERE u.lease_id IS NOT NULL AND u.cost <> coalesce(c.total, 0)
    UNION ALL
    SELECT 'lease ' || l.id || ': negative amount ' || l.amount FROM leases l WHERE l.amount < 0`.execute(db);
  const problems = rows.map((r) => r.problem);
  return { ok: problems.length === 0, problems };
}
