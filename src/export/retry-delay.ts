/**
 * When a failed webhook delivery is tried again: exponential backoff with jitter (half of each
 * step is random, so retries spread out), or what the receiver asked for in `retry-after`.
 */
export interface Backoff {
  /** The first retry waits between half of this and this. */
  baseMs: number;
  /** No step is longer. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 1_000, maxMs: 5 * 60_000 };

/** A receiver's `retry-after` is followed up to this long (a larger one is taken as this). */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;
/** Nor is it followed to a retry sooner than this (a `retry-after: 0` would otherwise spin). */
const MIN_RETRY_AFTER_MS = 100;

/** Milliseconds before retry number `attempt + 1`, after `attempt + 1` failed tries. */
export function retryDelayMs(attempt: number, retryAfter: string | null | undefined, nowMs: number, random: () => number, backoff: Backoff = DEFAULT_BACKOFF): number {
  const asked = retryAfterMs(retryAfter, nowMs);
  if (asked !== undefined) return Math.min(MAX_RETRY_AFTER_MS, Math.max(MIN_RETRY_AFTER_MS, asked));
  const step = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + (random() * step) / 2);
}

/** `retry-after` as milliseconds from now: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, nowMs: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its day and month (IMF-fixdate, or the obsolete forms).
  const at = /[a-z]/i.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
