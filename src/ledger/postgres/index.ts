import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AccountRow, Database, JournalRow, UsageRecordRow } from '../schema.js';
import type { HoldBudget, SettleRequest, UsageRecordInput } from '../types.js';
import {
  EMBEDDED_LISTENER,
  type BudgetUsageRow, type ExpiredLease, type HoldCandidate, type HoldOutcome, type LeaseRenewal, type LeaseState, type LeaseTake, type LedgerEvent, type LedgerListener,
  type LedgerStatements, type SettledHold, type SpendRow, type SpendRowGroup, type SpendRowsQuery, type StoredResponseRow,
} from '../statements.js';
import { toJson } from '../json.js';
import { migrations } from '../migrations/index.js';
import { placeHolds } from './place-holds.js';
import { settle } from './settle.js';
import { extendHold, reapBatch, release } from './release.js';
import { budgetUsage, checkTimeZone, ownedBudgetUsage } from './budgets.js';
import { advanceUsageExport, claimUsageExport, usageToExport } from './usage-export.js';
import { endLease, leasedElsewhere, reapLeases, renewLease, settleLeased, takeLease } from './leases.js';
import { CHANNEL, listenPostgres, type ListenOptions } from './listen.js';

const GROUP_EXPR: Record<SpendRowGroup, RawBuilder<string | null>> = {
  day: sql`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  model: sql`coalesce(model_served, model_requested)`,
  key: sql`key_id`,
  user: sql`end_user`,
  session: sql`session_id`,
};

/**
 * The ledger's statements on PostgreSQL, and on PGlite (PostgreSQL compiled to WebAssembly, the
 * same SQL). Each money operation is one statement: CTEs chain its reads and writes, so it is
 * atomic without a transaction round trip.
 */
export class PostgresStatements implements LedgerStatements {
  readonly migrations = migrations;

  constructor(
    readonly db: Kysely<Database>,
    readonly migrationTableSchema?: string,
    /** PostgreSQL's server: how to listen for other instances' announcements. Absent on PGlite (one process). */
    private readonly listenOptions?: Omit<ListenOptions, 'schema'>,
  ) {}

  on(db: Kysely<Database>): LedgerStatements {
    return new PostgresStatements(db, this.migrationTableSchema, this.listenOptions);
  }

  now(): RawBuilder<Date> {
    return sql<Date>`now()`;
  }

  async createAccount(id: string, name: string, initialBalance: bigint): Promise<AccountRow> {
    const { rows } = await sql<AccountRow>`
      WITH a AS (
        INSERT INTO accounts (id, name, balance) VALUES (${id}, ${name}, ${initialBalance})
        RETURNING *
      ), j AS (
        INSERT INTO journal (account_id, kind, amount, balance_after, reason)
        SELECT id, 'credit', balance, balance, 'initial balance' FROM a WHERE balance <> 0
      )
      SELECT * FROM a`.execute(this.db);
    return rows[0];
  }

  async credit(accountId: string, amount: bigint, reason: string, max: bigint): Promise<JournalRow | undefined> {
    const { rows } = await sql<JournalRow>`
      WITH a AS (
        UPDATE accounts SET balance = balance + ${amount}
        WHERE id = ${accountId} AND balance + ${amount} >= held AND balance + ${amount} <= ${max}
        RETURNING id, balance
      )
      INSERT INTO journal (account_id, kind, amount, balance_after, reason)
      SELECT id, 'credit', ${amount}, balance, ${reason} FROM a
      RETURNING *`.execute(this.db);
    return rows[0];
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
  async announce(event: LedgerEvent, id: string): Promise<void> {
    if (!this.listenOptions) return;
    await sql`SELECT pg_notify(${CHANNEL}, current_schema() || ${`\t${event}\t${id}`})`.execute(this.db);
  }
  async listen(onEvent: (event: LedgerEvent, id: string) => void, onState: (listening: boolean) => void): Promise<LedgerListener> {
    if (!this.listenOptions) return EMBEDDED_LISTENER;
    const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(this.db);
    return listenPostgres({ ...this.listenOptions, schema: rows[0].schema }, onEvent, onState);
  }
  checkTimeZone(tz: string): Promise<void> {
    return checkTimeZone(this.db, tz);
  }
  budgetUsage(keyId: string, at?: Date): Promise<BudgetUsageRow[]> {
    return budgetUsage(this.db, keyId, at);
  }
  ownedBudgetUsage(budgets: HoldBudget[], at?: Date): Promise<BudgetUsageRow[]> {
    return ownedBudgetUsage(this.db, budgets, at);
  }

  async spend(q: SpendRowsQuery): Promise<SpendRow[]> {
    const order = q.groupBy === 'day' ? sql`grp ASC` : sql`cost DESC, grp ASC NULLS LAST`;
    // sum() of bigint is numeric in PostgreSQL: cast back.
    const { rows } = await sql<SpendRow>`
      SELECT ${GROUP_EXPR[q.groupBy]} AS grp, count(*)::bigint AS requests,
        coalesce(sum(input_no_cache + input_cache_read + input_cache_write), 0)::bigint AS input,
        coalesce(sum(output_tokens), 0)::bigint AS output,
        coalesce(sum(input_cache_read), 0)::bigint AS cached,
        coalesce(sum(cost), 0)::bigint AS cost
      FROM usage_records
      WHERE created_at >= ${q.from} AND created_at < ${q.to}
        ${q.accountId !== undefined ? sql`AND account_id = ${q.accountId}` : sql``}
        ${q.keyId !== undefined ? sql`AND key_id = ${q.keyId}` : sql``}
        ${q.userId !== undefined ? sql`AND user_id = ${q.userId}` : sql``}
      GROUP BY 1
      ORDER BY ${order}`.execute(this.db);
    return rows;
  }

  async storeResponse(r: StoredResponseRow): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await sql`
        INSERT INTO stored_responses (id, account_id, response, input_items, expires_at)
        VALUES (${r.id}, ${r.accountId}, ${toJson(r.response)}::jsonb, ${toJson(r.inputItems)}::jsonb, ${r.expiresAt})
        ON CONFLICT (id) DO NOTHING`.execute(tx);
      if (r.items.length === 0) return;
      await sql`
        INSERT INTO stored_response_items (account_id, item_id, response_id, item)
        SELECT ${r.accountId}, x.item_id, ${r.id}, x.item
        FROM jsonb_to_recordset(${toJson(r.items)}::jsonb) AS x(item_id text, item jsonb)
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
