import type { Attempt, RateLimitStatus, Usage } from '../ir/index.js';
import type { HoldBudget, Ledger } from '../ledger/index.js';
import type { KeyLimits, RateLimiter } from '../limits/index.js';
import type { ProviderRegistry } from '../providers/types.js';
import type { Catalog } from '../routing/catalog.js';
import type { DeploymentHealth } from '../routing/health/index.js';
import type { RequestTrace } from '../telemetry/types.js';

/** The part of the ledger the pipeline needs (the real Ledger satisfies it structurally). */
export type LedgerPort = Pick<Ledger, 'placeHold' | 'holdLikelyPasses' | 'extendHold' | 'settle' | 'release'>;

export type RunStatus = 'ok' | 'cancelled' | 'error' | 'refused';

export interface Logger {
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface PipelineDeps {
  catalog: Catalog;
  ledger: LedgerPort;
  /** Provider kind -> provider: how to call it and what it can do. */
  providers: ProviderRegistry;
  /** Per-key rate limits, checked before the hold. */
  limiter: Pick<RateLimiter, 'admit' | 'adjust'>;
  holdTtlMs: number;
  /** Deployments' cooldowns, calls in flight and latency: routing reads it, attempts report to it. */
  health: DeploymentHealth;
  log: Logger;
  /** Injected clock (ms), so tests can control it. */
  now: () => number;
  /** Uniform in [0, 1) for the weighted pick of a deployment; Math.random when absent (tests seed one). */
  random?: () => number;
}

/** Who is calling and how to stop: everything the pipeline needs from the HTTP layer. */
export interface CallContext {
  requestId: string;
  accountId: string;
  /** The API key it came with; absent for an identity provider's user. */
  keyId?: string;
  /** The identity provider's user it came from; absent for an API key. */
  userId?: string;
  /** The user's budgets and their groups' (a key's budgets are the ledger's). */
  budgets?: HoldBudget[];
  /** The key's (or user's) rate limits, when it has any. */
  limits?: KeyLimits;
  /** The models the key may use, when it is restricted. */
  allowedModels?: ReadonlySet<string>;
  /** Aborted when the client disconnects, or (with a GatewayError as its reason) when the gateway ends the request. */
  signal: AbortSignal;
  /** The request's trace, when telemetry is on. */
  trace?: RequestTrace;
}

/** Filled in while the run goes; final once the event stream has ended. */
export interface RunSummary {
  attempts: Attempt[];
  servedModel?: string;
  servedVariant?: 'standard' | 'fast';
  inputTokens: number;
  usage?: Usage;
  cost: bigint;
  status?: RunStatus;
  /** Request features the upstream did not get (hosted tools on a non-Responses upstream, ...). */
  warnings?: string[];
  /** The key's rate limits after this request was admitted (absent when it has none). */
  rateLimit?: RateLimitStatus;
}
