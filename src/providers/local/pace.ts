/**
 * Paces a local stream at a number of tokens per second. Token n is due at start + n/rate, so
 * timer lateness does not accumulate. Waits use the call's signal and end at once on abort.
 * At rate 0 (or unset) there is no delay, but the loop still yields to the event loop every
 * YIELD_EVERY tokens so one long answer cannot starve other requests.
 */
import { setImmediate, setTimeout } from 'node:timers/promises';

export const YIELD_EVERY = 16;

export class Pacer {
  private start: number | undefined;
  private emitted = 0;
  private sinceYield = 0;

  constructor(
    private readonly tokensPerSecond: number | undefined,
    private readonly signal: AbortSignal,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Accounts for `tokens` more tokens and returns a promise to await when they are not due yet
   * (undefined when they may go now: most tokens at rate 0 need no promise at all).
   * Throws, or rejects with, the signal's reason on abort.
   */
  wait(tokens: number): Promise<void> | undefined {
    this.signal.throwIfAborted();
    this.start ??= this.now();
    this.emitted += tokens;
    this.sinceYield += tokens;
    const rate = this.tokensPerSecond ?? 0;
    const delay = rate > 0 ? this.start + (this.emitted * 1000) / rate - this.now() : 0;
    if (delay >= 1) {
      this.sinceYield = 0;
      return this.guard(setTimeout(delay, undefined, { signal: this.signal }));
    }
    if (this.sinceYield >= YIELD_EVERY) {
      this.sinceYield = 0;
      return this.guard(setImmediate(undefined, { signal: this.signal }));
    }
    return undefined;
  }

  private async guard(wait: Promise<unknown>): Promise<void> {
    try {
      await wait;
    } catch (e) {
      // timers/promises rejects with its own AbortError; surface the signal's reason instead.
      this.signal.throwIfAborted();
      throw e;
    }
  }
}
