import * as metrics from '../util/metrics.js';
import { MemoryLimitStore } from './memory-store.js';
import { RedisLimitStore } from './redis-store.js';
import type { Correction, KeyLimits, LimitDecision, LimitStore } from './types.js';

export type { BucketStatus, Correction, KeyLimits, LimitDecision, LimitStore } from './types.js';
export { MemoryLimitStore } from './memory-store.js';
export { RedisLimitStore } from './redis-store.js';

interface WarnLog {
  warn(obj: object, msg?: string): void;
}

/** At most one "store unreachable" warning per this many ms, however many requests pass. */
const WARN_EVERY_MS = 10_000;

/**
 * Per-key rate limits in front of the completion pipeline. Keys without limits cost nothing (no
 * store call). When the store cannot answer (Redis disconnected, or no answer within its
 * timeout), requests are admitted and the failure is logged and counted: limits protect
 * capacity, while money is protected by the ledger's holds whatever happens here.
 */
export class RateLimiter {
  private lastWarning = -Infinity;

  constructor(
    private readonly store: LimitStore,
    private readonly log: WarnLog,
  ) {}

  /** The decision for a request of `tokens` input tokens, or undefined when nothing is enforced. */
  async admit(keyId: string, limits: KeyLimits | undefined, tokens: number): Promise<LimitDecision | undefined> {
    if (!limits || (limits.requestsPerMinute === undefined && limits.tokensPerMinute === undefined)) return undefined;
    if (!this.store.available()) {
      this.storeFailed(new Error('the rate-limit store is not connected'));
      return undefined;
    }
    try {
      const decision = await this.store.take(keyId, limits, tokens);
      if (!decision.allowed) metrics.rateLimited.inc({ limit: refusedBy(decision) });
      return decision;
    } catch (e) {
      this.storeFailed(e);
      return undefined;
    }
  }

  /**
   * Corrects an admitted request's buckets: the tokens it used beyond its input once settled, or
   * its request and input given back when its hold was refused. Not awaited by anyone.
   */
  adjust(keyId: string, limits: KeyLimits | undefined, by: Correction): void {
    if (!limits || (!by.requests && !by.tokens) || !this.store.available()) return;
    this.store.adjust(keyId, limits, by).catch((e) => this.storeFailed(e));
  }

  /** False while a shared store (Redis) is disconnected; always true in memory. For readiness. */
  available(): boolean {
    return this.store.available();
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private storeFailed(e: unknown): void {
    metrics.rateLimitStoreErrors.inc();
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.log.warn({ err: e }, 'rate limits: the store did not answer; requests are admitted without a check');
  }
}

/** The limit that refused: tokens for a request too large for it, else the one with nothing left (requests first). */
export function refusedBy(d: LimitDecision): 'requests' | 'tokens' {
  return !d.tooLarge && d.requests && d.requests.remaining === 0 ? 'requests' : 'tokens';
}

/** Redis when a URL is given (limits shared by every instance), else this process's memory. */
export async function openRateLimiter(opts: { redisUrl?: string; log: WarnLog }): Promise<RateLimiter> {
  const store = opts.redisUrl ? await RedisLimitStore.connect(opts.redisUrl) : new MemoryLimitStore();
  return new RateLimiter(store, opts.log);
}
