import type { Migration } from 'kysely';
import * as initial from './20260101000000_initial.js';
import * as keyRateLimits from './20261122000000_key_rate_limits.js';
import * as keyAllowedModels from './20261122000100_key_allowed_models.js';
import * as usageAttribution from './20261125000000_usage_attribution.js';
import * as lateCapture from './20261125000100_late_capture.js';
import * as storedResponses from './20261125000200_stored_responses.js';
import * as keyBudgetsExpiry from './20261126000000_key_budgets_expiry.js';
import * as usersAudit from './20261128000000_users_audit.js';
import * as debtPricing from './20261128200000_debt_pricing.js';
import * as budgetOwners from './20261128300000_budget_owners.js';
import * as usageExports from './20261204000000_usage_exports.js';
import * as leases from './20261204100000_leases.js';
import * as sqliteInitial from './sqlite/20261127000000_initial.js';
import * as sqliteUsersAudit from './sqlite/20261128000000_users_audit.js';
import * as sqliteDebtPricing from './sqlite/20261128200000_debt_pricing.js';
import * as sqliteBudgetOwners from './sqlite/20261128300000_budget_owners.js';
import * as sqliteUsageExports from './sqlite/20261204000000_usage_exports.js';
import * as sqliteLeases from './sqlite/20261204100000_leases.js';

/** Static migration provider: names sort by timestamp; add new files here in order. */
export const migrations: Record<string, Migration> = {
  '20260101000000_initial': initial,
  '20261122000000_key_rate_limits': keyRateLimits,
  '20261122000100_key_allowed_models': keyAllowedModels,
  '20261125000000_usage_attribution': usageAttribution,
  '20261125000100_late_capture': lateCapture,
  '20261125000200_stored_responses': storedResponses,
  '20261126000000_key_budgets_expiry': keyBudgetsExpiry,
  '20261128000000_users_audit': usersAudit,
  '20261128200000_debt_pricing': debtPricing,
  '20261128300000_budget_owners': budgetOwners,
  '20261204000000_usage_exports': usageExports,
  '20261204100000_leases': leases,
};

/** SQLite's migrations (the embedded ledger): its own history, from the schema as it stands. */
export const sqliteMigrations: Record<string, Migration> = {
  '20261127000000_initial': sqliteInitial,
  '20261128000000_users_audit': sqliteUsersAudit,
  '20261128200000_debt_pricing': sqliteDebtPricing,
  '20261128300000_budget_owners': sqliteBudgetOwners,
  '20261204000000_usage_exports': sqliteUsageExports,
  '20261204100000_leases': sqliteLeases,
};
