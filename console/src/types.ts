/**
 * The API's shapes the console reads: the published document's own types (generated/types.ts,
 * from generated/openapi.yaml), so a change of the contract breaks the console's type-check.
 */
import type { components } from '../../generated/types.js';

type Schemas = components['schemas'];

export type Account = Schemas['Account'];
export type Period = Schemas['BudgetPeriod'];
export type Budget = Schemas['KeyBudget'];
export type ApiKey = Schemas['ApiKey'];
export type JournalEntry = Schemas['LedgerEntry'];
export type UsageRecord = Schemas['UsageRecord'];
export type GroupBy = Schemas['SpendGroupBy'];
export type SpendRow = Schemas['SpendGroup'];
export type SpendList = Schemas['SpendSummary'];
export type BudgetStatus = Schemas['BudgetStatus'];
export type Balance = Schemas['Balance'];
export type DeploymentList = Schemas['DeploymentList'];
export type AuditPage = Schemas['AuditPage'];

/** A page of an admin list (ledger entries, usage records). */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  last_id: string | number | null;
}
