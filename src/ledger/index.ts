/** The ledger's public surface. Only src/ledger touches the database. */
export { openLedger, ledgerOptionsFromEnv, Ledger, DEFAULT_HOLD_TTL_MS } from './ledger.js';
export { DEFAULT_STATEMENT_TIMEOUT_MS } from './connect.js';
export { dataDirFromEnv, DEFAULT_EMBEDDED, EMBEDDED_DATABASES } from './data-dir.js';
export type { EmbeddedDatabase } from './data-dir.js';
export type { LedgerOptions, LedgerLog } from './ledger.js';
export type { SettleResult } from './settle.js';
export type { KeySettings } from './keys.js';
export { costOf, holdAmount, priceUsage, requestHold, roundUpToNanos, splitRoundedUp, unitsAsNanosText, type HoldHints, type PricedLine, type PricedUsage } from './price.js';
export type { HoldCandidate } from './price.js';
export { startReaper } from './reaper.js';
export { UsageExportCursor } from './usage-export.js';
export { ResponseStore, responseRetentionMsFromEnv, DEFAULT_RESPONSE_RETENTION_DAYS } from './response-store.js';
export type { StoredResponse } from './response-store.js';
export { DatabaseDeadline, isDatabaseUnavailable, REQUEST_DB_WAIT_MS } from './db-errors.js';
export { MAX_BALANCE, MONEY_UNIT } from './types.js';
export type {
  Account, KeyAuth, UserPrincipal, KeyRecord, JournalEntry, JournalKind, TokenCounts, Charge, UsageRecordInput, UsageRecord,
  HoldBudget, HoldRequest, SettleRequest, UsageFilter,
} from './types.js';
export type { BudgetScope, BudgetStatus, KeyBudget } from './budgets.js';
export { BUDGET_PERIODS, budgetJson, budgetScope, groupBudgetOwner } from './budgets.js';
export type { SpendGroup, SpendGroupBy, SpendQuery } from './spend.js';
export { SPEND_GROUPS } from './spend.js';
export type { UserRecord } from './users.js';
export type { Actor, AuditChange, AuditEntry, AuditFilter } from './audit.js';
