import { adjust, take, usedAt, type Level, type Levels } from './bucket.js';
import type { Correction, KeyLimits, LimitDecision, LimitStore } from './types.js';

/** Keys remembered before drained buckets (which equal absent ones) are swept out. */
const SWEEP_ABOVE = 100_000;
/** At most one sweep this often, so a store that stays large does not scan on every request. */
const SWEEP_EVERY_MS = 10_000;

/** The buckets of one instance, in its memory: for a single gateway, and when no Redis is set. */
export class MemoryLimitStore implements LimitStore {
  private buckets = new Map<string, Levels>();
  private lastSweep = -Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  async take(keyId: string, limits: KeyLimits, tokens: number): Promise<LimitDecision> {
    const now = this.now();
    if (this.buckets.size > SWEEP_ABOVE && now - this.lastSweep > SWEEP_EVERY_MS) this.sweep(now);
    const { decision, levels } = take(now, this.buckets.get(keyId) ?? {}, limits, tokens);
    this.buckets.set(keyId, levels);
    return decision;
  }

  async adjust(keyId: string, limits: KeyLimits, by: Correction): Promise<void> {
    const now = this.now();
    const levels = { ...this.buckets.get(keyId) };
    if (by.requests && limits.requestsPerMinute !== undefined) levels.requests = adjust(now, levels.requests, limits.requestsPerMinute, by.requests);
    if (by.tokens && limits.tokensPerMinute !== undefined) levels.tokens = adjust(now, levels.tokens, limits.tokensPerMinute, by.tokens);
    this.buckets.set(keyId, levels);
  }

  available(): boolean {
    return true;
  }

  async close(): Promise<void> {}

  private sweep(now: number): void {
    this.lastSweep = now;
    const drained = (l: Level | undefined) => !l || usedAt(l, l.limit, now) === 0;
    for (const [key, levels] of this.buckets) if (drained(levels.requests) && drained(levels.tokens)) this.buckets.delete(key);
  }
}
