import type { GatewayError } from '../../ir/index.js';

export interface RetryOptions {
  /** First backoff step; doubles per attempt. */
  baseDelayMs: number;
  /** Ceiling of a computed backoff. */
  maxDelayMs: number;
  /** A `retry-after` longer than this is not waited for: the error goes to routing (fallback). */
  retryAfterCapMs: number;
  /** [0, 1) source for jitter; injectable for tests. */
  random: () => number;
}

export const defaultRetryOptions: RetryOptions = {
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  retryAfterCapMs: 10_000,
  random: Math.random,
};

/**
 * Pure: how long to wait before attempt `attempt + 1`, or undefined to give up. Only retryable
 * errors (429, 5xx, 529, connection failures, timeouts) are retried, at most `maxRetries` times.
 */
export function retryDelayMs(err: GatewayError, attempt: number, maxRetries: number, o: RetryOptions): number | undefined {
  if (!err.retryable || attempt >= maxRetries) return undefined;
  if (err.retryAfter !== undefined) {
    const ms = err.retryAfter * 1000;
    return ms > o.retryAfterCapMs ? undefined : ms;
  }
  const exp = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
  // Equal jitter: half fixed, half random, so concurrent retries spread out.
  return exp / 2 + o.random() * (exp / 2);
}
