import type { BucketStatus, KeyLimits, LimitDecision } from './types.js';

/** Every limit is per minute. */
export const WINDOW_MS = 60_000;
/** Sums of fractional intervals must not refuse the L-th request of a full bucket by a rounding error. */
const EPSILON_MS = 1e-6;

/**
 * The generic cell rate algorithm (GCRA), a token bucket kept as one number per limit: the
 * bucket's theoretical arrival time `tat`, the moment it would be full again. A limit of L per
 * minute refills continuously, one unit every `WINDOW_MS / L` ms, as OpenAI's and Anthropic's own
 * limits do, so there is no burst of 2L at a window's edge.
 *
 * - A request needs one whole unit of its requests bucket.
 * - Tokens are only known in full after the answer, so a request is admitted while its tokens
 *   bucket is not empty, takes its input tokens at once, and the difference once the usage is
 *   known (`adjust`). The bucket may go into debt; later requests then wait for it to be repaid.
 *
 * `redis-store.ts` runs the same arithmetic in Lua; the store tests hold both to the same cases.
 */
export interface Tats {
  requests?: number;
  tokens?: number;
}

export function take(now: number, tats: Tats, limits: KeyLimits, tokens: number): { decision: LimitDecision; tats: Tats } {
  const req = limits.requestsPerMinute;
  const tok = limits.tokensPerMinute;
  let retryAfterMs = 0;
  let reqUsed = 0;
  let tokUsed = 0;
  if (req !== undefined) {
    reqUsed = Math.max(tats.requests ?? now, now) - now;
    const interval = WINDOW_MS / req;
    if (reqUsed + interval > WINDOW_MS + EPSILON_MS) retryAfterMs = Math.max(retryAfterMs, reqUsed + interval - WINDOW_MS);
  }
  if (tok !== undefined) {
    tokUsed = Math.max(tats.tokens ?? now, now) - now;
    if (tokUsed >= WINDOW_MS) retryAfterMs = Math.max(retryAfterMs, tokUsed - WINDOW_MS + WINDOW_MS / tok);
  }
  const allowed = retryAfterMs === 0;
  if (allowed) {
    if (req !== undefined) reqUsed += WINDOW_MS / req;
    if (tok !== undefined) tokUsed += (tokens * WINDOW_MS) / tok;
  }
  const next: Tats = allowed
    ? { requests: req === undefined ? tats.requests : now + reqUsed, tokens: tok === undefined ? tats.tokens : now + tokUsed }
    : tats;
  return {
    decision: {
      allowed,
      retryAfterMs: Math.ceil(retryAfterMs),
      requests: req === undefined ? undefined : bucketStatus(req, reqUsed),
      tokens: tok === undefined ? undefined : bucketStatus(tok, tokUsed),
    },
    tats: next,
  };
}

/** The tokens bucket's new `tat` after `tokens` more (or, negative, fewer) than were taken. */
export function adjust(now: number, tat: number | undefined, tokensPerMinute: number, tokens: number): number {
  return Math.max(now, Math.max(tat ?? now, now) + (tokens * WINDOW_MS) / tokensPerMinute);
}

/** A bucket as the headers show it, `usedMs` being its `tat` minus now. */
export function bucketStatus(limit: number, usedMs: number): BucketStatus {
  const interval = WINDOW_MS / limit;
  return {
    limit,
    remaining: Math.max(0, Math.min(limit, Math.floor((WINDOW_MS - usedMs + EPSILON_MS) / interval))),
    resetMs: Math.ceil(usedMs),
  };
}
