import * as metrics from '../util/metrics.js';
import { MemoryLimitStore } from './memory-store.js';
import { RedisLimitStore } from './redis-store.js';
import type { KeyLimits, LimitDecision, LimitStore } from './types.js';

export type { BucketStatus, KeyLimits, LimitDecision, LimitStore } from './types.js';
export { MemoryLimitStore } from './memory-store.js';
export { RedisLimitStore } from './redis-store.js';

interface WarnLog {
  warn(obj: object, msg?: string): void;
}

/** At most one "store unreachable" warning per this many ms, however many requests pass. */
const WARN_EVERY_MS = 10_000;

/**
 * Per-key rate limits in front of the completion pipeline. Keys without limits cost nothing (no
 * store call). When the store cannot answer (Redis down), requests are admitted and the failure
 * is logged and counted: limits protect capacity, while money is protected by the ledger's holds
 * whatever happens here.
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
    try {
      const decision = await this.store.take(keyId, limits, tokens);
      if (!decision.allowed) metrics.rateLimited.inc({ limit: refusedBy(decision) });
      return decision;
    } catch (e) {
      this.storeFailed(e);
      return undefined;
    }
  }

  /** Charges (or gives back) the difference between the tokens taken at admission and those used. */
  correct(keyId: string, limits: KeyLimits | undefined, tokens: number): void {
    if (limits?.tokensPerMinute === undefined || tokens === 0) return;
    this.store.adjust(keyId, limits, tokens).catch((e) => this.storeFailed(e));
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

/** The limit that refused: the one with nothing remaining (requests first). */
export function refusedBy(d: LimitDecision): 'requests' | 'tokens' {
  return d.requests && d.requests.remaining === 0 ? 'requests' : 'tokens';
}

/** Redis when a URL is given (limits shared by every instance), else this process's memory. */
export async function openRateLimiter(opts: { redisUrl?: string; log: WarnLog }): Promise<RateLimiter> {
  const store = opts.redisUrl ? await RedisLimitStore.connect(opts.redisUrl) : new MemoryLimitStore();
  return new RateLimiter(store, opts.log);
}
