/** The API's shapes the console reads (generated/openapi.yaml is the reference). */

export interface Account {
  id: string;
  name: string;
  balance: number;
  held: number;
  available: number;
  created_at: string;
}

export type Period = 'day' | 'week' | 'month' | 'lifetime';

export interface Budget {
  period: Period;
  limit: number;
}

export interface ApiKey {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  rpm_limit: number | null;
  tpm_limit: number | null;
  allowed_models: string[] | null;
  budgets?: Budget[] | null;
  budget_time_zone?: string | null;
  expires_at?: string | null;
}

export interface JournalEntry {
  id: number;
  kind: string;
  amount: number;
  balance_after: number;
  request_id: string | null;
  model: string | null;
  cost: number | null;
  reason: string | null;
  created_at: string;
}

export interface UsageRecord {
  request_id: string;
  model_requested: string;
  model_served: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cost: number;
  latency_ms: number;
  status: string;
  end_user: string | null;
  session: string | null;
  created_at: string;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  last_id: string | number | null;
}

export type GroupBy = 'day' | 'model' | 'key' | 'user' | 'session';

export interface SpendRow {
  group: string | null;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cost: number;
}

export interface SpendList {
  group_by: GroupBy;
  from: string;
  to: string;
  data: SpendRow[];
}

export interface BudgetStatus {
  period: Period;
  limit: number;
  spent: number;
  held: number;
  remaining: number;
  resets_at: string | null;
}

export interface Balance {
  account_id: string;
  balance: number;
  held: number;
  available: number;
  budgets?: BudgetStatus[];
}
