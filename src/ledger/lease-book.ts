/**
 * One balance lease as its instance keeps it in memory (leases.ts; DECISIONS.md, "Balance leases"):
 * what the lease reserves in the database, what the requests it admitted hold, what they captured
 * that no batch has written yet, and what is on its way back to the account. Holds are served from
 * it by subtraction; it says when to renew, by how much, and what it can give back. Pure: no I/O,
 * the clock is passed in.
 *
 * The database's lease amount is always at least what the instance owes on it (`owed`: the holds
 * of running requests, the captures not yet written, and any return under way): a hold is admitted
 * only from the free part, a request that ends moves what it captured (up to its hold) from
 * `inUse` to `unflushed`, and a batch statement that writes the captures takes them off the
 * lease's amount (`flushed`). A return is counted as owed from the moment it is asked for, so
 * nothing admitted meanwhile can lean on money that is leaving. The free part is what another
 * instance may ask for.
 */
export interface LeasePolicy {
  /** The lease's lifetime in the database; its expiry is moved on every third of it. */
  ttlMs: number;
  /** The spend rate is what the lease's holds took in this window. */
  windowMs: number;
  /** A lease is worth having only if it covers this many of the largest recent hold. */
  minHolds: number;
}

export const DEFAULT_LEASE_POLICY: LeasePolicy = { ttlMs: 60_000, windowMs: 2_000, minHolds: 20 };

export class LeaseBook {
  /** What the lease holds in the database (its row's amount, as last written). */
  private reserved = 0n;
  /** What admitted requests hold and have not settled or released. */
  private inUse = 0n;
  /** Requests admitted and not yet ended. */
  private running = 0;
  /** Captured by ended requests (up to their holds), not yet written by a batch statement. */
  private unflushed = 0n;
  /** Asked back by a return statement that has not answered yet. */
  private returning = 0n;
  /** When the lease expires by this instance's clock (before the database's: it is read before the statement is sent). */
  private expiresAt = 0;
  private renewedAt = 0;
  private lastAdmitAt = 0;
  /** Admitted amounts in the spend window, oldest first, from `head` on (a queue without shifting). */
  private recent: Array<{ at: number; amount: bigint }> = [];
  private head = 0;
  /** The sum of the window's amounts. */
  private spent = 0n;
  /** The window's amounts that no later one is at least as large as, oldest (largest) first: its maximum is the first. */
  private peaks: Array<{ at: number; amount: bigint }> = [];

  constructor(
    private readonly policy: LeasePolicy = DEFAULT_LEASE_POLICY,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The free part: what a hold may take now. Zero once the lease has expired. */
  get free(): bigint {
    if (!this.live()) return 0n;
    return this.reserved - this.owed;
  }

  /** What the lease must keep: running requests' holds, unwritten captures, returns under way. */
  get owed(): bigint {
    return this.inUse + this.unflushed + this.returning;
  }

  /** What its requests hold: running requests' holds and the captures not yet written. */
  get holding(): bigint {
    return this.inUse + this.unflushed;
  }

  /** Requests admitted here and not yet ended. */
  get inFlight(): number {
    return this.running;
  }

  /** Nothing admitted for two spend windows and nothing owed: the lease can end. */
  get idle(): boolean {
    return this.owed === 0n && this.now() - this.lastAdmitAt >= 2 * this.policy.windowMs;
  }

  /**
   * A statement moved the lease's expiry to `ttlMs` after it ran; `sentAt` is this clock read
   * before it was sent. The instance stops admitting a tenth of the lifetime before that, so a
   * request it admits is never one the reaper has already given back.
   */
  extended(sentAt: number): void {
    this.expiresAt = sentAt + (this.policy.ttlMs * 9) / 10;
    this.renewedAt = sentAt;
  }

  /** A take or renew statement added `amount` to the lease (zero when the account could not give it). */
  grew(amount: bigint): void {
    if (amount < 0n) throw new Error(`a lease grows by a positive amount, not ${amount}`);
    this.reserved += amount;
  }

  /** Serves a hold of `amount` from the lease; false when the free part does not cover it. */
  admit(amount: bigint): boolean {
    if (amount <= 0n || amount > this.free) return false;
    this.inUse += amount;
    this.running++;
    this.lastAdmitAt = this.now();
    const entry = { at: this.lastAdmitAt, amount };
    this.recent.push(entry);
    this.spent += amount;
    while (this.peaks.length > 0 && this.peaks[this.peaks.length - 1].amount <= amount) this.peaks.pop();
    this.peaks.push(entry);
    return true;
  }

  /**
   * A request admitted with `held` ended having captured `captured`. What its hold covered waits
   * for the next batch; the rest of the hold is free again. A capture beyond the hold is a debt of
   * the account (as for an exact hold), not the lease's. Returns the part the lease covers.
   */
  settle(held: bigint, captured: bigint): bigint {
    if (captured < 0n || held > this.inUse || this.running === 0) throw new Error(`cannot settle ${captured} of a hold of ${held} (${this.inUse} in use)`);
    const covered = captured < held ? captured : held;
    this.inUse -= held;
    this.running--;
    this.unflushed += covered;
    return covered;
  }

  /** A batch statement wrote `covered` of this lease's captures: they left the lease's amount with the balance. */
  flushed(covered: bigint): void {
    if (covered > this.unflushed) throw new Error(`flushed ${covered} but only ${this.unflushed} was waiting`);
    this.unflushed -= covered;
    this.reserved -= covered;
  }

  /** A batch statement found the lease ended: its captures were written as late ones, off the balance alone. */
  flushedAfterEnd(covered: bigint): void {
    if (covered > this.unflushed) throw new Error(`flushed ${covered} but only ${this.unflushed} was waiting`);
    this.unflushed -= covered;
  }

  /** Sets `amount` of the free part aside for a return statement; false when it is not free. */
  beginReturn(amount: bigint): boolean {
    if (amount <= 0n || amount > this.reserved - this.owed) return false;
    this.returning += amount;
    return true;
  }

  /** The return statement answered: the amount left the lease (`done`), or stays in it. */
  endReturn(amount: bigint, done: boolean): void {
    this.returning -= amount;
    if (done) this.reserved -= amount;
  }

  /** What can go back to the account now without touching anything owed (the free part, expired or not). */
  surplus(): bigint {
    const free = this.reserved - this.owed;
    return free > 0n ? free : 0n;
  }

  /** The size worth having free: the window's spend, and at least `minHolds` of its largest hold. */
  target(nextHold = 0n): bigint {
    this.forgetOld();
    const peak = this.peaks.length > 0 ? this.peaks[0].amount : 0n;
    const largest = peak > nextHold ? peak : nextHold;
    const floor = largest * BigInt(this.policy.minHolds);
    return this.spent > floor ? this.spent : floor;
  }

  /**
   * How much the lease should grow now (off the request's path), and whether its expiry is due to
   * move on; undefined when neither. It grows when its free part is below half the target (it would
   * run dry within about a window), back up to the target; its expiry moves on every third of its
   * lifetime while it is kept.
   */
  renewal(): { grow: bigint } | undefined {
    const target = this.target();
    const free = this.free;
    const due = this.now() - this.renewedAt >= this.policy.ttlMs / 3;
    const short = free * 2n < target;
    if (!due && !short) return undefined;
    return { grow: short ? target - free : 0n };
  }

  private live(): boolean {
    return this.now() < this.expiresAt;
  }

  private forgetOld(): void {
    const from = this.now() - this.policy.windowMs;
    while (this.head < this.recent.length && this.recent[this.head].at < from) this.spent -= this.recent[this.head++].amount;
    while (this.peaks.length > 0 && this.peaks[0].at < from) this.peaks.shift();
    // Compact now and then, so the queue's array does not grow for ever.
    if (this.head > 1024 && this.head * 2 > this.recent.length) {
      this.recent = this.recent.slice(this.head);
      this.head = 0;
    }
  }
}
