import type { Kysely, Migration, RawBuilder } from 'kysely';
import type { AccountRow, BudgetPeriod, Database, JournalRow, UsageRecordRow } from './schema.js';
import type { HoldBudget, HoldRequest, SettleRequest, UsageRecordInput } from './types.js';

/**
 * The ledger's statements, one implementation per database: `postgres/` (PostgreSQL and PGlite,
 * which speak the same SQL) and `sqlite/` (the embedded SQLite file). The connection (connect.ts)
 * picks the implementation once, as Kysely picks a dialect when it is built; the operation modules
 * (place-hold.ts, settle.ts, ...) hold the rules around each statement (validation, the answer, the
 * error) and never ask which database they run on. `make lint` refuses a dialect check anywhere else.
 *
 * Each method is one operation's writes, atomic: one SQL statement on PostgreSQL, one transaction
 * on SQLite (which has no UPDATE in a CTE, no FOR UPDATE and no time zones).
 */
export interface LedgerStatements {
  /** The connection (or transaction) these statements run on. */
  readonly db: Kysely<Database>;
  /** The same statements on another connection or transaction of the same database. */
  on(db: Kysely<Database>): LedgerStatements;
  /** The schema history that brings this database up to date (each database keeps its own). */
  readonly migrations: Record<string, Migration>;
  /** PostgreSQL only: the schema whose migration tables the migrator reads. */
  readonly migrationTableSchema?: string;

  /** The statement's clock, as SQL: the database's on PostgreSQL, this process's (the database's too) on SQLite. */
  now(): RawBuilder<Date>;

  /** Inserts the account and journals a non-zero opening balance as a credit. */
  createAccount(id: string, name: string, initialBalance: bigint): Promise<AccountRow>;
  /** Adds `amount` if the balance stays within [held, max]; the journal line, or undefined when refused. */
  credit(accountId: string, amount: bigint, reason: string, max: bigint): Promise<JournalRow | undefined>;

  /** Admits the holds (see place-hold.ts for the rule); one outcome per candidate. */
  placeHolds(holds: HoldCandidate[]): Promise<HoldOutcome[]>;
  /** Pushes a pending hold's expiry to `ttlMs` from now; false when it is no longer pending. */
  extendHold(requestId: string, ttlMs: number): Promise<boolean>;
  /** Captures each request's charges on its hold (see settle.ts); the holds this call resolved. */
  settle(requests: SettleRequest[]): Promise<SettledHold[]>;
  /** Voids a pending hold (with an optional zero-cost usage record); false when none was pending. */
  release(requestId: string, record?: UsageRecordInput): Promise<boolean>;
  /** Expires up to `batch` pending holds due at `now` (default: the database's clock); how many. */
  reapBatch(now: Date | undefined, batch: number): Promise<number>;

  /** Reserves a new lease of `amount` when the account's available balance is at least `need` (and the amount); undefined when refused. */
  takeLease(l: LeaseTake): Promise<{ available: bigint } | undefined>;
  /**
   * Moves an active lease's expiry to `ttlMs` from now and records its requests in flight; grows it
   * by `grow` when the account's available balance is at least `need`, or gives `grow` back when it
   * is negative. Undefined when the lease is no longer active; else whether it grew (or gave back).
   */
  renewLease(r: LeaseRenewal): Promise<{ changed: boolean } | undefined>;
  /** Ends an active lease, giving what it still reserves back to the account; what it gave, or undefined when it was not active. */
  endLease(leaseId: string): Promise<bigint | undefined>;
  /**
   * Writes the ended requests of leases (distinct request ids) in one statement: their captures off
   * the balance, what their holds covered off the leases and the account's held, the journal lines
   * and the usage records (see leases.ts). A request whose usage record exists is skipped, so a batch
   * written twice changes nothing. The request ids it wrote, and the leases it found ended.
   */
  settleLeased(items: SettleRequest[], leases: LeaseState[]): Promise<{ written: string[]; ended: string[] }>;
  /** Expires up to `batch` active leases due at `now` (default: the database's clock), giving their amount back; the leases expired. */
  reapLeases(now: Date | undefined, batch: number): Promise<ExpiredLease[]>;
  /** What active leases of other instances reserve on the account. */
  leasedElsewhere(accountId: string, instance: string): Promise<bigint>;
  /**
   * Tells every instance on this database, when the caller's transaction commits (or at once
   * outside one), that an account's leases are wanted back (`wanted`). PostgreSQL's NOTIFY; the
   * embedded databases have one process, which knows already. A key's or user's change (`key`) is
   * announced by the database itself, however it is made (the leases migration's trigger).
   */
  announce(event: LedgerEvent, id: string): Promise<void>;
  /** Listens for the announcements of every instance (see LedgerListener). */
  listen(onEvent: (event: LedgerEvent, id: string) => void, onState: (listening: boolean) => void): Promise<LedgerListener>;

  /** Throws when this database cannot compute periods in time zone `tz`. */
  checkTimeZone(tz: string): Promise<void>;
  /** A key's budgets with the usage of the periods `at` (default now) falls in. */
  budgetUsage(keyId: string, at?: Date): Promise<BudgetUsageRow[]>;
  /** These budgets (a user's, a group's) with the usage of the periods `at` (default now) falls in. */
  ownedBudgetUsage(budgets: HoldBudget[], at?: Date): Promise<BudgetUsageRow[]>;

  /** Usage records of [from, to) summed by `group`, ordered as spend.ts says. */
  spend(q: SpendRowsQuery): Promise<SpendRow[]>;

  /** Stores a response and its referable items (nothing when the id is stored already). */
  storeResponse(r: StoredResponseRow): Promise<void>;

  /**
   * Claims the usage export `name` for `holder` until `ttlMs` from now, or renews its claim; the
   * export's cursor is created (at the ledger's start) the first time. False while another
   * holder's claim runs (see usage-export.ts).
   */
  claimUsageExport(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Up to `limit` usage records after the export's cursor and older than `marginMs` by the statement's clock, in (created_at, request_id) order. */
  usageToExport(name: string, marginMs: number, limit: number): Promise<UsageRecordRow[]>;
  /**
   * Moves the cursor to the record `requestId` (`count` more delivered) and renews the claim;
   * false when `holder` no longer holds the export or the cursor is at or past that record already.
   */
  advanceUsageExport(name: string, holder: string, requestId: string, count: number, ttlMs: number): Promise<boolean>;
}

export type LedgerEvent = 'key' | 'wanted';

/**
 * Announcements from every instance of the database. `listening` is false while they may be missed
 * (the listening connection is down): an instance then serves no lease, because a key revoked
 * elsewhere would go unnoticed. On the embedded databases this process is the only writer, so it
 * always listens.
 */
export interface LedgerListener {
  readonly listening: boolean;
  close(): Promise<void>;
}

/** The embedded databases' listener: this process is the only writer, so nothing can be missed. */
export const EMBEDDED_LISTENER: LedgerListener = { listening: true, close: async () => undefined };

export interface LeaseTake {
  id: string;
  accountId: string;
  instance: string;
  amount: bigint;
  /** The account's available balance must be at least this (the lease takes at most half of it). */
  need: bigint;
  ttlMs: number;
}

/** What an instance's requests hold on one of its leases, as it writes it with the lease. */
export interface LeaseState {
  id: string;
  inFlight: number;
  inUse: bigint;
}

export interface LeaseRenewal extends LeaseState {
  /** Positive: grow by it (if `need` is available); negative: give it back; zero: only the expiry. */
  grow: bigint;
  need: bigint;
  ttlMs: number;
}

export interface ExpiredLease {
  id: string;
  account_id: string;
  instance: string;
  amount: bigint;
  in_flight: number;
}

/** A hold that passed validation, with its place in the batch. */
export interface HoldCandidate {
  ord: number;
  h: HoldRequest;
}

/** What the hold statement decided for one candidate. */
export interface HoldOutcome {
  ord: number;
  placed: boolean;
  duplicate: boolean;
  key_ok: boolean;
  /** False when a budget of the key, the user or a group has no room for the hold (as the statement saw it). */
  budget_ok: boolean;
  /** The account's available balance right after this hold (placed holds only). */
  available: bigint | null;
}

export interface SettledHold {
  id: string;
  captured: bigint;
}

export interface BudgetUsageRow {
  /** The key's id, the user's or `group:` and the group's name. */
  owner: string;
  period: BudgetPeriod;
  limit_amount: bigint;
  spent: bigint | null;
  held: bigint | null;
  /** When the next period starts; null for a lifetime budget. */
  resets_at: Date | null;
}

export type SpendRowGroup = 'day' | 'model' | 'key' | 'user' | 'session';

export interface SpendRowsQuery {
  from: Date;
  to: Date;
  groupBy: SpendRowGroup;
  accountId?: string;
  keyId?: string;
  userId?: string;
}

export interface SpendRow {
  grp: string | null;
  requests: bigint;
  input: bigint;
  output: bigint;
  cached: bigint;
  cost: bigint;
}

export interface StoredResponseRow {
  id: string;
  accountId: string;
  response: Record<string, unknown>;
  inputItems: Array<Record<string, unknown>>;
  items: Array<{ item_id: string; item: Record<string, unknown> }>;
  expiresAt: Date;
}
