import type { BucketStatus, RateLimitStatus } from '../ir/rate-limit.js';

export type { BucketStatus };

/** A key's rate limits; an absent limit is not enforced. */
export interface KeyLimits {
  /** Requests admitted per minute. */
  requestsPerMinute?: number;
  /** Tokens (input and output) per minute. */
  tokensPerMinute?: number;
}

/** The buckets after the request (as they were, when it was refused). */
export interface LimitDecision extends RateLimitStatus {
  allowed: boolean;
  /** When refused: milliseconds until a request would be admitted. */
  retryAfterMs: number;
}

/**
 * Where the buckets live: this process (one instance) or Redis (shared by every instance, on
 * Redis's clock). Both run the same arithmetic (see gcra.ts and the Lua in redis-store.ts).
 */
export interface LimitStore {
  /** Admits one request costing `tokens` now, or refuses it without taking anything. */
  take(keyId: string, limits: KeyLimits, tokens: number): Promise<LimitDecision>;
  /** Corrects a key's token bucket once the real usage is known (negative gives tokens back). */
  adjust(keyId: string, limits: KeyLimits, tokens: number): Promise<void>;
  close(): Promise<void>;
}
