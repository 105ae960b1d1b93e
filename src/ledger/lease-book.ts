/**
 * One balance lease as its instance keeps it in memory (DECISIONS.md, "Balance leases"): what the
 * lease reserved in the database, what the requests it admitted hold, and what they captured that
 * no batch has written yet. Holds are served from it by subtraction; it says when to renew, to
 * what size, and what it can give back. Pure: no I/O, the clock is passed in.
 *
 * The database's lease amount is always at least `inUse + unflushed`: a hold is admitted only
 * from the free part, a settled request moves its capture from `inUse` to `unflushed`, and a batch
 * statement that writes the captures takes them off the lease's amount (`flushed`). So what the
 * instance owes is always covered by what the lease reserved, and the free part is what another
 * instance may ask for.
 */
export interface LeasePolicy {
  /** The lease's lifetime in the database; it is renewed (expiry moved on) every third of it. */
  ttlMs: number;
  /** The spend rate is what the scope's holds took in this window. */
  windowMs: number;
  /** A lease is worth taking only if it covers this many of the scope's largest recent hold. */
  minHolds: number;
}

export const DEFAULT_LEASE_POLICY: LeasePolicy = { ttlMs: 60_000, windowMs: 2_000, minHolds: 20 };

export class LeaseBook {
  /** What the lease holds in the database (its row's amount, as last written). */
  private reserved = 0n;
  /** What admitted requests hold and have not settled or released. */
  private inUse = 0n;
  /** Captured by settled requests, not yet written by a batch statement. */
  private unflushed = 0n;
  private expiresAt = 0;
  private renewedAt = 0;
  /** Admitted amounts in the spend window, oldest first. */
  private recent: Array<{ at: number; amount: bigint }> = [];

  constructor(
    private readonly policy: LeasePolicy = DEFAULT_LEASE_POLICY,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The free part: what a hold may take now. Zero once the lease has expired. */
  get free(): bigint {
    if (!this.live()) return 0n;
    return this.reserved - this.inUse - this.unflushed;
  }

  /** A take or renew statement answered: the lease now reserves `amount` in all, until `expiresAt`. */
  granted(amount: bigint, expiresAt: number): void {
    if (amount < this.inUse + this.unflushed) throw new Error(`a lease of ${amount} cannot cover the ${this.inUse + this.unflushed} it owes`);
    this.reserved = amount;
    this.expiresAt = expiresAt;
    this.renewedAt = this.now();
  }

  /** Serves a hold of `amount` from the lease; false when the free part does not cover it. */
  admit(amount: bigint): boolean {
    if (amount <= 0n || amount > this.free) return false;
    this.inUse += amount;
    this.recent.push({ at: this.now(), amount });
    return true;
  }

  /** A request admitted with `held` ended: `captured` (at most `held`) waits for the next batch, the rest is free again. */
  settle(held: bigint, captured: bigint): void {
    if (captured < 0n || captured > held || held > this.inUse) throw new Error(`cannot settle ${captured} of a hold of ${held} (${this.inUse} in use)`);
    this.inUse -= held;
    this.unflushed += captured;
  }

  /** A batch statement wrote `captured` of this lease's captures: they left the lease's amount with the balance. */
  flushed(captured: bigint): void {
    if (captured > this.unflushed) throw new Error(`flushed ${captured} but only ${this.unflushed} was waiting`);
    this.unflushed -= captured;
    this.reserved -= captured;
  }

  /** A return statement gave `amount` of the free part back to the account. */
  returned(amount: bigint): void {
    if (amount > this.reserved - this.owed) throw new Error(`cannot return ${amount}: only ${this.reserved - this.owed} is free`);
    this.reserved -= amount;
  }

  /** Captured and not yet written: the next batch statement's share of this lease. */
  get pendingCaptures(): bigint {
    return this.unflushed;
  }

  /** What the lease must keep: the holds of running requests and the captures not yet written. */
  get owed(): bigint {
    return this.inUse + this.unflushed;
  }

  /** The size worth asking for: the window's spend, and at least `minHolds` of its largest hold. */
  target(nextHold = 0n): bigint {
    this.forgetOld();
    let spent = 0n;
    let largest = nextHold;
    for (const r of this.recent) {
      spent += r.amount;
      if (r.amount > largest) largest = r.amount;
    }
    const floor = largest * BigInt(this.policy.minHolds);
    return spent > floor ? spent : floor;
  }

  /**
   * The lease's new total when it should be renewed now (off the request's path), else undefined:
   * when its free part is below half the target (it would run dry within about a window), or a
   * third of its lifetime has passed since the last renewal (the expiry must move on while it is used).
   */
  renewal(nextHold = 0n): bigint | undefined {
    const target = this.target(nextHold);
    const due = this.now() - this.renewedAt >= this.policy.ttlMs / 3;
    if (!due && this.free * 2n >= target) return undefined;
    return this.owed + target;
  }

  /** What can go back to the account now without touching anything owed: the free part beyond `keep`. */
  surplus(keep = 0n): bigint {
    const free = this.reserved - this.owed;
    return free > keep ? free - keep : 0n;
  }

  private live(): boolean {
    return this.now() < this.expiresAt;
  }

  private forgetOld(): void {
    const from = this.now() - this.policy.windowMs;
    let drop = 0;
    while (drop < this.recent.length && this.recent[drop].at < from) drop++;
    if (drop > 0) this.recent.splice(0, drop);
  }
}
