import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AccountRow, Database, JournalRow, UsageRecordRow } from '../schema.js';
import type { HoldBudget, SettleRequest, UsageRecordInput } from '../types.js';
import {
  EMBEDDED_LISTENER,
  type BudgetUsageRow, type ExpiredLease, type HoldCandidate, type HoldOutcome, type LeaseRenewal, type LeaseState, type LeaseTake, type LedgerListener,
  type LedgerStatements, type SettledHold, type SpendRow, type SpendRowGroup, type SpendRowsQuery, type StoredResponseRow,
} from '../statements.js';
import { toJson } from '../json.js';
import { sqliteMigrations } from '../migrations/index.js';
import { checkTimeZoneName } from '../budget-periods.js';
import { inTransaction } from './transaction.js';
import { placeHolds } from './place-holds.js';
import { settle } from './settle.js';
import { extendHold, reapBatch, release } from './release.js';
import { budgetUsage, ownedBudgetUsage } from './budgets.js';
import { advanceUsageExport, claimUsageExport, usageToExport } from './usage-export.js';
import { endLease, leasedElsewhere, reapLeases, renewLease, settleLeased, takeLease } from './leases.js';

/** created_at is epoch milliseconds here: the UTC day by strftime. */
const GROUP_EXPR: Record<SpendRowGroup, RawBuilder<string | null>> = {
  day: sql`strftime('%Y-%m-%d', created_at / 1000, 'unixepoch')`,
  model: sql`coalesce(model_served, model_requested)`,
  key: sql`key_id`,
  user: sql`end_user`,
  session: sql`session_id`,
};

/**
 * The ledger's statements on the embedded SQLite file. Each money operation is one transaction
 * (see inTransaction), which takes the write lock at BEGIN: what it reads stays true until it
 * commits, so the same checks as PostgreSQL's single statements hold.
 */
export class SqliteStatements implements LedgerStatements {
  readonly migrations = sqliteMigrations;

  constructor(readonly db: Kysely<Database>) {}

  on(db: Kysely<Database>): LedgerStatements {
    return new SqliteStatements(db);
  }

  now(): RawBuilder<Date> {
    return sql<Date>`${Date.now()}`;
  }

  createAccount(id: string, name: string, initialBalance: bigint): Promise<AccountRow> {
    return inTransaction(this.db, async (trx) => {
      const a = await trx.insertInto('accounts').values({ id, name, balance: initialBalance }).returningAll().executeTakeFirstOrThrow();
      if (a.balance !== 0n) await trx.insertInto('journal').values({ account_id: a.id, kind: 'credit', amount: a.balance, balance_after: a.balance, reason: 'initial balance' }).execute();
      return a;
    });
  }

  credit(accountId: string, amount: bigint, reason: string, max: bigint): Promise<JournalRow | undefined> {
    return inTransaction(this.db, async (trx) => {
      const { rows: [a] } = await sql<{ id: string; balance: bigint }>`
        UPDATE accounts SET balance = balance + ${amount}
        WHERE id = ${accountId} AND balance + ${amount} >= held AND balance + ${amount} <= ${max}
        RETURNING id, balance`.execute(trx);
      if (!a) return undefined;
      return trx.insertInto('journal').values({ account_id: a.id, kind: 'credit', amount, balance_after: a.balance, reason }).returningAll().executeTakeFirstOrThrow();
    });
  }

  placeHolds(holds: HoldCandidate[]): Promise<HoldOutcome[]> {
    return placeHolds(this.db, holds);
  }
  extendHold(requestId: string, ttlMs: number): Promise<boolean> {
    return extendHold(this.db, requestId, ttlMs);
  }
  settle(requests: SettleRequest[]): Promise<SettledHold[]> {
    return settle(this.db, requests);
  }
  release(requestId: string, record?: UsageRecordInput): Promise<boolean> {
    return release(this.db, requestId, record);
  }
  reapBatch(now: Date | undefined, batch: number): Promise<number> {
    return reapBatch(this.db, now, batch);
  }
  takeLease(l: LeaseTake): Promise<{ available: bigint } | undefined> {
    return takeLease(this.db, l);
  }
  renewLease(r: LeaseRenewal): Promise<{ changed: boolean } | undefined> {
    return renewLease(this.db, r);
  }
  endLease(leaseId: string): Promise<bigint | undefined> {
    return endLease(this.db, leaseId);
  }
  settleLeased(items: SettleRequest[], leases: LeaseState[]): Promise<{ written: string[]; ended: string[] }> {
    return settleLeased(this.db, items, leases);
  }
  reapLeases(now: Date | undefined, batch: number): Promise<ExpiredLease[]> {
    return reapLeases(this.db, now, batch);
  }
  leasedElsewhere(accountId: string, instance: string): Promise<bigint> {
    return leasedElsewhere(this.db, accountId, instance);
  }
  /** One process writes the file (its directory is locked): it knows its own changes already. */
  async announce(): Promise<void> {}
  async listen(): Promise<LedgerListener> {
    return EMBEDDED_LISTENER;
  }
  /** SQLite has no time zones: JavaScript's (ICU's) decide where periods begin. */
  async checkTimeZone(tz: string): Promise<void> {
    checkTimeZoneName(tz);
  }
  budgetUsage(keyId: string, at?: Date): Promise<BudgetUsageRow[]> {
    return budgetUsage(this.db, keyId, at?.getTime() ?? Date.now());
  }
  ownedBudgetUsage(budgets: HoldBudget[], at?: Date): Promise<BudgetUsageRow[]> {
    return ownedBudgetUsage(this.db, budgets, at?.getTime() ?? Date.now());
  }

  async spend(q: SpendRowsQuery): Promise<SpendRow[]> {
    const order = q.groupBy === 'day' ? sql`grp ASC` : sql`cost DESC, grp ASC NULLS LAST`;
    // SQLite's count and sum of INTEGER are 64-bit integers already.
    const { rows } = await sql<SpendRow>`
      SELECT ${GROUP_EXPR[q.groupBy]} AS grp, count(*) AS requests,
        coalesce(sum(input_no_cache + input_cache_read + input_cache_write), 0) AS input,
        coalesce(sum(output_tokens), 0) AS output,
        coalesce(sum(input_cache_read), 0) AS cached,
        coalesce(sum(cost), 0) AS cost
      FROM usage_records
      WHERE created_at >= ${q.from} AND created_at < ${q.to}
        ${q.accountId !== undefined ? sql`AND account_id = ${q.accountId}` : sql``}
        ${q.keyId !== undefined ? sql`AND key_id = ${q.keyId}` : sql``}
        ${q.userId !== undefined ? sql`AND user_id = ${q.userId}` : sql``}
      GROUP BY 1
      ORDER BY ${order}`.execute(this.db);
    return rows;
  }

  /** JSON is text here, and the items are unpacked by json_each. */
  async storeResponse(r: StoredResponseRow): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await sql`
        INSERT INTO stored_responses (id, account_id, response, input_items, expires_at)
        VALUES (${r.id}, ${r.accountId}, ${toJson(r.response)}, ${toJson(r.inputItems)}, ${r.expiresAt})
        ON CONFLICT (id) DO NOTHING`.execute(tx);
      if (r.items.length === 0) return;
      // WHERE true: SQLite would read the ON of ON CONFLICT as a join's.
      await sql`
        INSERT INTO stored_response_items (account_id, item_id, response_id, item)
        SELECT ${r.accountId}, x.value ->> '$.item_id', ${r.id}, x.value -> '$.item'
        FROM json_each(${toJson(r.items)}) AS x WHERE true
        ON CONFLICT DO NOTHING`.execute(tx);
    });
  }

  claimUsageExport(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return claimUsageExport(this.db, name, holder, ttlMs);
  }
  usageToExport(name: string, marginMs: number, limit: number): Promise<UsageRecordRow[]> {
    return usageToExport(this.db, name, marginMs, limit);
  }
  advanceUsageExport(name: string, holder: string, requestId: string, count: number, ttlMs: number): Promise<boolean> {
    return advanceUsageExport(this.db, name, holder, requestId, count, ttlMs);
  }
}
