/** One account's books on this instance. */
interface Entry {
  /** Available balance after the account's last hold answered here; undefined after a refusal. */
  available?: bigint;
  /** When `available` was read, for its time-to-live. */
  readAt: number;
  /** Holds submitted here and not yet answered. */
  pending: bigint;
}

export interface HoldForecastOptions {
  /** How long a balance read from a hold is believed. */
  ttlMs: number;
  /** Most accounts remembered; the oldest without pending holds is forgotten first. */
  maxEntries: number;
}

/**
 * Whether an account's next hold will pass, as this instance sees it: the balance available after
 * the account's last hold answered here, minus the holds submitted here since and not yet answered.
 * The pipeline uses it to start the upstream call while the hold commits instead of after.
 *
 * Money never moves on its word: the hold statement still decides, before a byte reaches the
 * client. On one instance the forecast errs only low (settles give money back that it does not
 * see); another instance's spending can make it err high until this instance's next hold is
 * answered, for at most `ttlMs`. Erring high costs one upstream call started and cancelled. An
 * account it does not know, or whose last hold was refused, is forecast to fail.
 */
export class HoldForecast {
  private entries = new Map<string, Entry>();

  constructor(
    private readonly opts: HoldForecastOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when the account's known available balance covers `amount` on top of its pending holds. */
  covers(accountId: string, amount: bigint): boolean {
    const e = this.entries.get(accountId);
    if (e?.available === undefined || this.now() - e.readAt > this.opts.ttlMs) return false;
    return e.available - e.pending >= amount;
  }

  submitted(accountId: string, amount: bigint): void {
    const e = this.entries.get(accountId);
    if (e) e.pending += amount;
    else this.remember(accountId, { readAt: 0, pending: amount });
  }

  /** A hold was answered: `available` after it when it was placed, undefined when it was refused. */
  answered(accountId: string, amount: bigint, available: bigint | undefined): void {
    const e = this.entries.get(accountId);
    if (!e) return;
    e.pending -= amount;
    e.available = available;
    e.readAt = this.now();
  }

  private remember(accountId: string, entry: Entry): void {
    if (this.entries.size >= this.opts.maxEntries) {
      for (const [id, e] of this.entries) {
        if (e.pending === 0n) {
          this.entries.delete(id);
          break;
        }
      }
    }
    this.entries.set(accountId, entry);
  }
}
