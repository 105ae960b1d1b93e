import type { ColumnType, Generated, Selectable } from 'kysely';

/**
 * Kysely's view of the tables. BIGINT columns are `bigint` on both pg and PGlite
 * (see connect.ts: both drivers parse OID 20 with BigInt).
 */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface AccountsTable {
  id: string;
  name: string;
  balance: bigint;
  held: Generated<bigint>;
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: Timestamp;
  revoked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  rpm_limit: ColumnType<number | null, number | null | undefined, number | null>;
  tpm_limit: ColumnType<number | null, number | null | undefined, number | null>;
  allowed_models: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  expires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  budget_time_zone: Generated<string>;
}

export type BudgetPeriod = 'day' | 'week' | 'month' | 'lifetime';

export interface KeyBudgetsTable {
  key_id: string;
  period: BudgetPeriod;
  limit_amount: bigint;
}

export interface BudgetUsageTable {
  /** A key's id, a user's (`usr_…`) or `group:` and the group's name (budgets.ts). */
  owner: string;
  period: BudgetPeriod;
  period_start: Timestamp;
  limit_amount: bigint;
  spent: Generated<bigint>;
  held: Generated<bigint>;
}

export interface BudgetHoldsTable {
  hold_id: string;
  owner: string;
  period: BudgetPeriod;
  period_start: Timestamp;
}

export type HoldStatus = 'pending' | 'settled' | 'released' | 'expired';

export interface HoldsTable {
  id: string;
  account_id: string;
  amount: bigint;
  status: HoldStatus;
  captured: Generated<bigint>;
  created_at: Timestamp;
  expires_at: Timestamp;
  resolved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface JournalTable {
  id: Generated<bigint>;
  account_id: string;
  kind: 'credit' | 'capture';
  amount: bigint;
  balance_after: bigint;
  request_id: string | null;
  model: string | null;
  cost: bigint | null;
  input_no_cache: bigint | null;
  input_cache_read: bigint | null;
  input_cache_write: bigint | null;
  output_tokens: bigint | null;
  reasoning_tokens: bigint | null;
  reason: string | null;
  created_at: Timestamp;
}

export interface UsageRecordsTable {
  request_id: string;
  account_id: string;
  key_id: string | null;
  model_requested: string;
  model_served: string | null;
  attempts: unknown;
  input_no_cache: bigint;
  input_cache_read: bigint;
  input_cache_write: bigint;
  output_tokens: bigint;
  reasoning_tokens: bigint;
  cost: bigint;
  latency_ms: bigint;
  status: string;
  end_user: string | null;
  session_id: string | null;
  user_id: string | null;
  /** What the capture took that no hold covered (a debt; see the debt_pricing migration). */
  beyond_hold: Generated<bigint>;
  /** Each attempt's priced lines (StoredPricing[]), so an invoice can be recomputed; null when none. */
  pricing: unknown;
  /** The balance lease that served the request (its captures have no hold); null for a hold's. */
  lease_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

export type LeaseStatus = 'active' | 'returned' | 'expired';

/** A share of an account's balance an instance reserved to serve holds from memory (leases.ts). */
export interface LeasesTable {
  id: string;
  account_id: string;
  /** The instance that took it (host, process and a random part). */
  instance: string;
  /** What it reserves now; counted in the account's `held` while active. */
  amount: bigint;
  status: Generated<LeaseStatus>;
  /** Requests its instance was running on it at its last write. */
  in_flight: Generated<number>;
  /** What those requests held then (and their captures not yet written). */
  in_use: Generated<bigint>;
  created_at: Timestamp;
  expires_at: Timestamp;
  resolved_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface UsersTable {
  id: string;
  account_id: string;
  issuer: string;
  subject: string;
  name: string | null;
  groups: ColumnType<string[], string, string>;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  disabled_at: Date | null;
}

export interface AuditLogTable {
  id: Generated<bigint>;
  actor_kind: 'admin_key' | 'user' | 'cli' | 'system';
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  before: ColumnType<unknown, string | null, never>;
  after: ColumnType<unknown, string | null, never>;
  request_id: string | null;
  created_at: Timestamp;
}

export interface StoredResponsesTable {
  id: string;
  account_id: string;
  response: unknown;
  input_items: unknown;
  created_at: Timestamp;
  expires_at: Date;
}

export interface StoredResponseItemsTable {
  account_id: string;
  item_id: string;
  response_id: string;
  item: unknown;
}

/** A usage export's cursor and who exports now (usage-export.ts). */
export interface UsageExportsTable {
  name: string;
  after_created_at: Generated<Date>;
  after_request_id: Generated<string>;
  delivered: Generated<bigint>;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  holder: string | null;
  held_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  key_budgets: KeyBudgetsTable;
  budget_usage: BudgetUsageTable;
  budget_holds: BudgetHoldsTable;
  holds: HoldsTable;
  leases: LeasesTable;
  journal: JournalTable;
  usage_records: UsageRecordsTable;
  stored_responses: StoredResponsesTable;
  stored_response_items: StoredResponseItemsTable;
  users: UsersTable;
  audit_log: AuditLogTable;
  usage_exports: UsageExportsTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type HoldRow = Selectable<HoldsTable>;
export type JournalRow = Selectable<JournalTable>;
export type UsageRecordRow = Selectable<UsageRecordsTable>;
