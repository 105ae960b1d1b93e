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
  /** Refused because the input alone is more than the tokens limit: waiting never helps. */
  tooLarge?: boolean;
}

/** Units to give back to (negative) or take from a key's buckets once they are known. */
export interface Correction {
  requests?: number;
  tokens?: number;
}

/**
 * Where the buckets live: this process (one instance) or Redis (shared by every instance, on
 * Redis's clock). Both run the same arithmetic (see bucket.ts and the Lua in redis-store.ts).
 */
export interface LimitStore {
  /** Admits one request costing `tokens` now, or refuses it without taking anything. */
  take(keyId: string, limits: KeyLimits, tokens: number): Promise<LimitDecision>;
  /** Corrects a key's buckets: the real usage once known, or what a refused hold gives back. */
  adjust(keyId: string, limits: KeyLimits, by: Correction): Promise<void>;
  /** False when a check cannot be answered now (Redis disconnected), so none is tried. */
  available(): boolean;
  close(): Promise<void>;
}
