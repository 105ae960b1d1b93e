import { adjust, take, type Tats } from './gcra.js';
import type { KeyLimits, LimitDecision, LimitStore } from './types.js';

/** Keys remembered before full buckets (which equal absent ones) are swept out. */
const SWEEP_ABOVE = 100_000;

/** The buckets of one instance, in its memory: for a single gateway, and when no Redis is set. */
export class MemoryLimitStore implements LimitStore {
  private buckets = new Map<string, Tats>();

  constructor(private readonly now: () => number = Date.now) {}

  async take(keyId: string, limits: KeyLimits, tokens: number): Promise<LimitDecision> {
    const now = this.now();
    if (this.buckets.size > SWEEP_ABOVE) this.sweep(now);
    const { decision, tats } = take(now, this.buckets.get(keyId) ?? {}, limits, tokens);
    this.buckets.set(keyId, tats);
    return decision;
  }

  async adjust(keyId: string, limits: KeyLimits, tokens: number): Promise<void> {
    if (limits.tokensPerMinute === undefined || tokens === 0) return;
    const tats = this.buckets.get(keyId) ?? {};
    this.buckets.set(keyId, { ...tats, tokens: adjust(this.now(), tats.tokens, limits.tokensPerMinute, tokens) });
  }

  async close(): Promise<void> {}

  private sweep(now: number): void {
    for (const [key, t] of this.buckets) {
      if ((t.requests ?? 0) <= now && (t.tokens ?? 0) <= now) this.buckets.delete(key);
    }
  }
}
