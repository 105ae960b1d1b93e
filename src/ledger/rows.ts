import type { Account, Charge, JournalEntry, KeyRecord, PricedAttempt, TokenCounts, UsageRecord } from './types.js';
import type { AccountRow, ApiKeyRow, JournalRow, UsageRecordRow } from './schema.js';
import type { Usage } from '../ir/usage.js';

/** Row -> domain mappers. Pure; every BIGINT is already a bigint (see connect.ts). */

export function toAccount(r: AccountRow): Account {
  return {
    id: r.id,
    name: r.name,
    balance: r.balance,
    held: r.held,
    available: r.balance - r.held,
    createdAt: r.created_at,
  };
}

export function toKeyRecord(r: ApiKeyRow, budgets: KeyRecord['budgets']): KeyRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    prefix: r.prefix,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    rpmLimit: r.rpm_limit,
    tpmLimit: r.tpm_limit,
    allowedModels: r.allowed_models,
    budgets,
    budgetTimeZone: r.budget_time_zone,
    expiresAt: r.expires_at,
  };
}

export function toJournalEntry(r: JournalRow): JournalEntry {
  const tokens: TokenCounts | null =
    r.output_tokens === null
      ? null
      : {
          inputNoCache: r.input_no_cache ?? 0n,
          inputCacheRead: r.input_cache_read ?? 0n,
          inputCacheWrite: r.input_cache_write ?? 0n,
          output: r.output_tokens,
          reasoning: r.reasoning_tokens ?? 0n,
        };
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    amount: r.amount,
    balanceAfter: r.balance_after,
    requestId: r.request_id,
    model: r.model,
    cost: r.cost,
    tokens,
    reason: r.reason,
    createdAt: r.created_at,
  };
}

export function toUsageRecord(r: UsageRecordRow): UsageRecord {
  return {
    requestId: r.request_id,
    accountId: r.account_id,
    keyId: r.key_id,
    modelRequested: r.model_requested,
    modelServed: r.model_served,
    attempts: Array.isArray(r.attempts) ? r.attempts : [],
    latencyMs: Number(r.latency_ms),
    status: r.status,
    endUser: r.end_user,
    session: r.session_id,
    userId: r.user_id,
    tokens: {
      inputNoCache: r.input_no_cache,
      inputCacheRead: r.input_cache_read,
      inputCacheWrite: r.input_cache_write,
      output: r.output_tokens,
      reasoning: r.reasoning_tokens,
    },
    cost: r.cost,
    beyondHold: r.beyond_hold,
    pricing: toPricing(r.pricing),
    createdAt: r.created_at,
  };
}

/** One attempt's priced lines as usage_records.pricing stores them: femtodollar amounts as exact decimal strings. */
interface StoredPricing {
  model: string;
  deployment: string | null;
  price_source: string | null;
  service_tier: string | null;
  long_context_above: number | null;
  lines: Array<{ kind: string; count: number; rate: string }>;
  exact: string;
  cost: string;
}

/**
 * A request's charges as usage_records.pricing (JSON text): each attempt's priced lines, so an
 * invoice can be recomputed. Null unless every charge was priced line by line.
 */
export function pricingJson(charges: Charge[]): string | null {
  if (charges.length === 0 || charges.some((c) => !c.priced)) return null;
  const stored: StoredPricing[] = charges.map((c) => ({
    model: c.model,
    deployment: c.deployment ?? null,
    price_source: c.priceSource ?? null,
    service_tier: c.priced!.serviceTier ?? null,
    long_context_above: c.priced!.above ?? null,
    lines: c.priced!.lines.map((l) => ({ kind: l.kind, count: l.count, rate: l.rate.toString() })),
    exact: c.priced!.exact.toString(),
    cost: c.cost.toString(),
  }));
  return JSON.stringify(stored);
}

function toPricing(v: unknown): PricedAttempt[] | null {
  if (!Array.isArray(v)) return null;
  return (v as StoredPricing[]).map((p) => ({
    model: p.model,
    deployment: p.deployment,
    priceSource: p.price_source,
    serviceTier: p.service_tier,
    longContextAbove: p.long_context_above,
    lines: p.lines.map((l) => ({ kind: l.kind, count: l.count, rate: BigInt(l.rate) })),
    exact: BigInt(p.exact),
    cost: BigInt(p.cost),
  }));
}

/** IR usage (numbers) -> ledger token counts (bigints); rejects what is not a count. */
export function tokenCounts(u: Usage): TokenCounts {
  const n = (v: number, what: string) => {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${what} is not a token count: ${v}`);
    return BigInt(v);
  };
  return {
    inputNoCache: n(u.input.noCache, 'input.noCache'),
    inputCacheRead: n(u.input.cacheRead, 'input.cacheRead'),
    inputCacheWrite: n(u.input.cacheWrite, 'input.cacheWrite'),
    output: n(u.output.total, 'output.total'),
    reasoning: n(u.output.reasoning, 'output.reasoning'),
  };
}
