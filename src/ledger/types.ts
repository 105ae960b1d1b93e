import type { KeyLimits } from '../limits/types.js';
import type { Usage } from '../ir/usage.js';
import type { PricedLine, PricedUsage } from './price.js';

/** Money is integer nanodollars (1e-9 USD). */
export const MONEY_UNIT = 'nanodollars';

/**
 * The largest balance the ledger keeps: the API answers money as JSON numbers, exact up to 2^53 - 1
 * (about 9 million USD), and a balance past that could never be shown again.
 */
export const MAX_BALANCE = BigInt(Number.MAX_SAFE_INTEGER);

export interface Account {
  id: string;
  name: string;
  balance: bigint;
  /**
   * What running requests hold: pending holds, and what requests served from balance leases hold
   * (leases.ts). The unused part of a lease is not counted: any request may have it.
   */
  held: bigint;
  /** balance - held: what new requests may take. */
  available: bigint;
  createdAt: Date;
}

export interface KeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** First 12 characters of the key, for display only. */
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** Requests per minute; null is no limit. */
  rpmLimit: number | null;
  /** Tokens (input and output) per minute; null is no limit. */
  tpmLimit: number | null;
  /** The catalog models the key may use; null is every model. */
  allowedModels: string[] | null;
  /** Spend budgets, at most one per period (see budgets.ts). */
  budgets: Array<{ period: 'day' | 'week' | 'month' | 'lifetime'; limit: bigint }>;
  /** IANA time zone where the budgets' periods begin. */
  budgetTimeZone: string;
  /** After it the key is refused as if revoked; null: never. */
  expiresAt: Date | null;
}

/** A user signed in with the organisation's identity provider (a verified token's claims). */
export interface UserPrincipal {
  /** `usr_…`, derived from issuer and subject: the same on every instance. */
  id: string;
  issuer: string;
  subject: string;
  /** For people to read (the email or preferred username); null when the token has none. */
  name: string | null;
  groups: string[];
  organization: string | null;
  /** A member of an admin group (the console's operator role). */
  admin: boolean;
}

/**
 * A budget a hold is checked against besides its key's: a signed-in user's own, or a group's (its
 * members together), as the identity policy in the config sets it (budgets.ts).
 */
export interface HoldBudget {
  /** Whose: a user's id (`usr_…`) or `group:` and the group's name (groupBudgetOwner). */
  owner: string;
  period: 'day' | 'week' | 'month' | 'lifetime';
  /** Nanodollars per period. */
  limit: bigint;
  /** IANA time zone where its days, weeks and months begin. */
  timeZone: string;
}

/**
 * Who a verified credential belongs to, with its rate limits and allowed models (absent when it
 * has none): an API key (`keyId`) or an identity provider's user (`user`).
 */
export interface KeyAuth {
  accountId: string;
  keyId?: string;
  user?: UserPrincipal;
  limits?: KeyLimits;
  /** The catalog models it may use (absent: every model). */
  allowedModels?: ReadonlySet<string>;
  /** Epoch milliseconds after which the key is refused (absent: never); checked at every use. */
  expiresAt?: number;
  /** A user's budgets and their groups' (absent for a key: its budgets are in the ledger). */
  budgets?: HoldBudget[];
  /** A key with budgets of its own (in the ledger): its holds are always placed in the database. */
  keyBudgets?: boolean;
}

export type JournalKind = 'credit' | 'capture';

export interface TokenCounts {
  inputNoCache: bigint;
  inputCacheRead: bigint;
  inputCacheWrite: bigint;
  output: bigint;
  reasoning: bigint;
}

export interface JournalEntry {
  id: bigint;
  accountId: string;
  kind: JournalKind;
  /** Signed change of the balance: credits positive (or negative for a correction), captures <= 0. */
  amount: bigint;
  /** The balance right after this line; the chain of lines is exact. */
  balanceAfter: bigint;
  requestId: string | null;
  model: string | null;
  /** The priced cost of a capture line (what it charged: -amount). */
  cost: bigint | null;
  tokens: TokenCounts | null;
  reason: string | null;
  createdAt: Date;
}

/** One billed attempt: each attempt is billed at its own model's price. */
export interface Charge {
  model: string;
  usage: Usage;
  /** Whole nanodollars: what this attempt adds to the request's exact sum rounded up once. */
  cost: bigint;
  /** The exact cost in femtodollars (routing/catalog.ts), before rounding. */
  exact?: bigint;
  /** The priced lines (each kind of token with its rate), so an invoice can be recomputed. */
  priced?: PricedUsage;
  /** Where the price came from (the deployment's `priceSource`: config, the price table and its version...). */
  priceSource?: string;
  /** The deployment that served the attempt (`<model>/<name>`). */
  deployment?: string;
}

/** One attempt's priced usage as the usage record keeps it: the invoice lines of the request. */
export interface PricedAttempt {
  model: string;
  deployment: string | null;
  /** Where the price came from. */
  priceSource: string | null;
  /** The service tier whose prices applied, when priced apart; null: the standard prices. */
  serviceTier: string | null;
  /** The long-context threshold the prompt was above, when a tier applied. */
  longContextAbove: number | null;
  /** Each kind of token (or server-tool use) with its count and rate (femtodollars per unit). */
  lines: PricedLine[];
  /** Femtodollars, exact: the sum of the lines. */
  exact: bigint;
  /** Nanodollars charged for this attempt (the request's exact sum is rounded up once, then split). */
  cost: bigint;
}

/** What the pipeline knows about a finished request; the ledger adds account, cost and tokens. */
export interface UsageRecordInput {
  keyId: string | null;
  modelRequested: string;
  modelServed: string | null;
  /** One entry per upstream attempt (model, provider, status, error...), stored as JSON. */
  attempts: unknown[];
  latencyMs: number;
  /** e.g. 'ok', 'error', 'cancelled'. */
  status: string;
  /** The end user the client named (OpenAI `user` / `safety_identifier`, Anthropic `metadata.user_id`). */
  endUser?: string | null;
  /** The session the client named (Claude Code's `X-Claude-Code-Session-Id`, OpenAI `prompt_cache_key`). */
  session?: string | null;
  /** The identity provider's user the request came from (absent: an API key's). */
  userId?: string | null;
}

/** Filters of the usage list: only the records of this end user, session, key, model and time range. */
export interface UsageFilter {
  endUser?: string;
  session?: string;
  keyId?: string;
  /** Asked for or served by this model. */
  model?: string;
  /** Created at or after. */
  from?: Date;
  /** Created before. */
  to?: Date;
  userId?: string;
}

export interface UsageRecord extends UsageRecordInput {
  requestId: string;
  accountId: string;
  tokens: TokenCounts;
  /** What was captured for the request (0 for a released hold). */
  cost: bigint;
  /**
   * What of `cost` no hold covered (a debt): the part above the hold when the usage came to more
   * than it, or all of a capture after its hold expired. The balance may be below zero by it.
   */
  beyondHold: bigint;
  /** Each attempt's priced lines; null when the request was not priced line by line (a release). */
  pricing: PricedAttempt[] | null;
  createdAt: Date;
}

export interface HoldRequest {
  requestId: string;
  accountId: string;
  /** The key the request came with: the hold is refused (401) if it was revoked meanwhile. */
  keyId?: string;
  /** Budgets besides the key's that the hold must fit: a user's and their groups'. */
  budgets?: HoldBudget[];
  amount: bigint;
  ttlMs: number;
}

export interface SettleRequest {
  requestId: string;
  charges: Charge[];
  record: UsageRecordInput;
  /** Served from a balance lease (leases.ts) instead of a hold: the lease and what it set aside for the request. */
  lease?: { id: string; accountId: string; held: bigint };
}
