import type { BucketStatus, KeyLimits, LimitDecision } from './types.js';

/** Every limit is per minute. */
export const WINDOW_MS = 60_000;
/** Sums of fractional units must not refuse the L-th request of an empty bucket by a rounding error. */
const EPSILON = 1e-9;

/**
 * One limit's bucket: `used` units at time `at` (ms), under the limit `limit`. Units drain
 * continuously, `limit` per minute, as OpenAI's and Anthropic's own limits refill (there is no
 * window edge where twice the limit can pass).
 */
export interface Level {
  used: number;
  at: number;
  limit: number;
}

export interface Levels {
  requests?: Level;
  tokens?: Level;
}

/**
 * Units in use now, under `limit`. A changed limit never makes a key wait longer than it had to:
 * raised, the units stay (the key gets through as soon as the new limit allows); lowered, they
 * shrink in proportion (the bucket is full again when it would have been).
 */
export function usedAt(level: Level | undefined, limit: number, now: number): number {
  if (!level) return 0;
  const used = Math.max(0, level.used - ((now - level.at) * level.limit) / WINDOW_MS);
  return limit < level.limit ? (used * limit) / level.limit : used;
}

/**
 * Admits one request whose input is `tokens` tokens, or refuses it without taking anything.
 *
 * - A request needs one unit of its requests bucket.
 * - Its input must fit in its tokens bucket; input larger than the whole limit never fits
 *   (`tooLarge`). The output is only known after the answer and is added then (`adjust`), so
 *   the bucket can go over its limit by what the requests in flight produce; later requests wait.
 *
 * `redis-store.ts` runs the same arithmetic in Lua; the store tests hold both to the same cases.
 */
export function take(now: number, levels: Levels, limits: KeyLimits, tokens: number): { decision: LimitDecision; levels: Levels } {
  const rpm = limits.requestsPerMinute;
  const tpm = limits.tokensPerMinute;
  let waitMs = 0;
  let tooLarge = false;
  let reqUsed = rpm === undefined ? 0 : usedAt(levels.requests, rpm, now);
  let tokUsed = tpm === undefined ? 0 : usedAt(levels.tokens, tpm, now);
  if (rpm !== undefined && reqUsed + 1 > rpm + EPSILON) waitMs = Math.max(waitMs, ((reqUsed + 1 - rpm) * WINDOW_MS) / rpm);
  if (tpm !== undefined) {
    if (tokens > tpm) tooLarge = true;
    else if (tokUsed + tokens > tpm + EPSILON) waitMs = Math.max(waitMs, ((tokUsed + tokens - tpm) * WINDOW_MS) / tpm);
  }
  const allowed = waitMs === 0 && !tooLarge;
  const next: Levels = { ...levels };
  if (allowed) {
    if (rpm !== undefined) next.requests = { used: (reqUsed += 1), at: now, limit: rpm };
    if (tpm !== undefined) next.tokens = { used: (tokUsed += tokens), at: now, limit: tpm };
  }
  return { decision: decision(allowed, waitMs, tooLarge, limits, reqUsed, tokUsed), levels: allowed ? next : levels };
}

/** A bucket after `delta` more (or, negative, fewer) units than it took. */
export function adjust(now: number, level: Level | undefined, limit: number, delta: number): Level {
  return { used: Math.max(0, usedAt(level, limit, now) + delta), at: now, limit };
}

/** The decision as both stores report it, from each bucket's units in use. */
export function decision(allowed: boolean, waitMs: number, tooLarge: boolean, limits: KeyLimits, reqUsed: number, tokUsed: number): LimitDecision {
  return {
    allowed,
    retryAfterMs: Math.ceil(waitMs),
    ...(tooLarge && { tooLarge }),
    ...(limits.requestsPerMinute !== undefined && { requests: bucketStatus(limits.requestsPerMinute, reqUsed) }),
    ...(limits.tokensPerMinute !== undefined && { tokens: bucketStatus(limits.tokensPerMinute, tokUsed) }),
  };
}

function bucketStatus(limit: number, used: number): BucketStatus {
  return {
    limit,
    remaining: Math.max(0, Math.min(limit, Math.floor(limit - used + EPSILON))),
    resetMs: Math.ceil((used * WINDOW_MS) / limit),
  };
}
