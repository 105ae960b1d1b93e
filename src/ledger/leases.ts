import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { HoldRequest, SettleRequest, UsageRecordInput } from './types.js';
import type { LeaseState, LedgerStatements } from './statements.js';
import { DEFAULT_LEASE_POLICY, LeaseBook, type LeasePolicy } from './lease-book.js';
import { chargedTotal } from './settle.js';

/**
 * Balance leases (DECISIONS.md, "Balance leases"): this instance reserves part of an account's
 * available balance in one statement and serves the account's holds from memory against it, so no
 * database round trip stands between such a request and its upstream call. What each lease's
 * requests capture is written in batches (the ledger's flush, `settleLeased`).
 *
 * - **Which requests**: those whose hold would take no budget (the key has none, nor the user or
 *   their groups); the ledger decides (`Ledger.placeHold`). Every other request places an exact hold.
 * - **When a lease is taken**: after an exact hold of the account placed here leaves at least
 *   `2 × minHolds` such holds available: it reserves `minHolds` of them, and never more than half
 *   of what is available. A smaller balance stays with exact holds, so a nearly empty account is
 *   never split between instances.
 * - **Renewed ahead of need**, off the request's path: when its free part falls below half the
 *   recent spend (LeaseBook.target), it grows back to it (at most half the available balance); its
 *   expiry moves on every third of its lifetime. One statement per lease at a time.
 * - **Short of lease**, a request asks for the rest at once (a renewal it waits for), then places
 *   an exact hold; refused, the ledger gives this instance's unused leases of the account back and
 *   asks every other instance to (`wanted`), then tries again for a bounded time (`makeRoom`).
 * - **Ending**: a lease nothing was admitted from for two windows, with nothing owed, is returned;
 *   `close` returns every lease with nothing owed (the ledger flushes first). A lease of a process
 *   that died is expired by any instance's reaper: its unused part goes back to the account.
 */
export interface LeaseOptions {
  policy?: LeasePolicy;
  /** How long an account whose leases were wanted back is served by exact holds only, here. */
  wantedBackoffMs?: number;
  /** How often leases are looked after (expiry, idle ones returned). */
  tickMs?: number;
  log?: { warn(obj: object, msg?: string): void };
}

interface Lease {
  id: string;
  accountId: string;
  book: LeaseBook;
  /** A statement about this lease is under way (one at a time). */
  busy?: Promise<void>;
  /** Being returned whole: admits nothing. */
  ending: boolean;
}

/** A request admitted from a lease, until it ends; then what its hold covered, until a batch writes it. */
interface Admitted {
  lease: Lease;
  held: bigint;
  covered?: bigint;
}

const DEFAULT_WANTED_BACKOFF_MS = 5_000;
const DEFAULT_TICK_MS = 1_000;

export class Leases {
  /** This process, as lease rows name it. */
  readonly instance = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  private readonly policy: LeasePolicy;
  private readonly byAccount = new Map<string, Lease>();
  private readonly admitted = new Map<string, Admitted>();
  /** Accounts with a lease being taken. */
  private readonly opening = new Set<string>();
  /** Accounts whose leases were wanted back: exact holds only, until then. */
  private readonly wantedUntil = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly s: LedgerStatements,
    private readonly opts: LeaseOptions = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.policy = opts.policy ?? DEFAULT_LEASE_POLICY;
    this.timer = setInterval(() => this.tick(), opts.tickMs ?? DEFAULT_TICK_MS);
    this.timer.unref();
  }

  /** Serves `h` from the account's lease when its free part covers it (no I/O); false otherwise. */
  admit(h: HoldRequest): boolean {
    const lease = this.byAccount.get(h.accountId);
    if (!lease || lease.ending || this.isWanted(h.accountId) || !lease.book.admit(h.amount)) return false;
    this.admitted.set(h.requestId, { lease, held: h.amount });
    this.renewIfDue(lease);
    return true;
  }

  /**
   * The account's lease is short of `h`: asks for the rest and what the recent spend wants (one
   * renewal, shared by every request that finds the lease short meanwhile) and waits for it; true
   * when `h` is then admitted.
   */
  async grow(h: HoldRequest): Promise<boolean> {
    const lease = this.byAccount.get(h.accountId);
    if (!lease || lease.ending || this.isWanted(h.accountId)) return false;
    if (!lease.busy) {
      const grow = lease.book.target(h.amount) + h.amount - lease.book.free;
      void this.renew(lease, grow > h.amount ? grow : h.amount);
    }
    await lease.busy;
    return this.byAccount.get(h.accountId) === lease && this.admit(h);
  }

  /** An exact hold of the account was placed here, leaving `available`: takes a lease when the balance is large enough. */
  placedExact(h: HoldRequest, available: bigint): void {
    const id = h.accountId;
    if (this.closed || this.byAccount.has(id) || this.opening.has(id) || this.isWanted(id)) return;
    const amount = h.amount * BigInt(this.policy.minHolds);
    const need = amount * 2n;
    if (available < need) return;
    this.opening.add(id);
    const sentAt = this.now();
    const lease: Lease = { id: `lse_${randomBytes(12).toString('hex')}`, accountId: id, book: new LeaseBook(this.policy, this.now), ending: false };
    void this.s
      .takeLease({ id: lease.id, accountId: id, instance: this.instance, amount, need, ttlMs: this.policy.ttlMs })
      .then(
        (granted) => {
          if (!granted) return;
          lease.book.grew(amount);
          lease.book.extended(sentAt);
          this.byAccount.set(id, lease);
          // Closed while the statement ran: give it straight back.
          if (this.closed) void this.end(lease);
        },
        (err) => this.opts.log?.warn({ err: { message: (err as Error)?.message }, accountId: id }, 'could not take a balance lease; holds stay exact'),
      )
      .finally(() => this.opening.delete(id));
  }

  /** Whether `requestId` was admitted from a lease (it has no hold in the database). */
  has(requestId: string): boolean {
    return this.admitted.has(requestId);
  }

  /**
   * A leased request ended with these charges: the lease frees what its hold did not capture, and
   * the request becomes an item for the batch (its lease and hold attached). Call once per request.
   */
  ended(s: SettleRequest): SettleRequest {
    const a = this.admitted.get(s.requestId);
    if (!a) throw new Error(`request ${s.requestId} was not admitted from a lease`);
    if (a.covered !== undefined) throw new Error(`request ${s.requestId} ended twice`);
    a.covered = a.lease.book.settle(a.held, chargedTotal(s.charges));
    return { ...s, lease: { id: a.lease.id, accountId: a.lease.accountId, held: a.held } };
  }

  /** A leased request ended without a charge: its hold is free again; with a record, the batch item that writes it. */
  released(requestId: string, record?: UsageRecordInput): SettleRequest | undefined {
    if (record) return this.ended({ requestId, charges: [], record });
    const a = this.admitted.get(requestId);
    if (!a || a.covered !== undefined) throw new Error(`request ${requestId} is not a running leased request`);
    a.lease.book.settle(a.held, 0n);
    this.admitted.delete(requestId);
    return undefined;
  }

  /** A batch wrote these items (or had already): what their holds covered left the lease's amount. */
  written(items: SettleRequest[], endedLeases: string[]): void {
    const ended = new Set(endedLeases);
    for (const s of items) {
      const a = this.admitted.get(s.requestId);
      if (!a || a.covered === undefined) continue;
      this.admitted.delete(s.requestId);
      if (ended.has(a.lease.id)) a.lease.book.flushedAfterEnd(a.covered);
      else a.lease.book.flushed(a.covered);
    }
    for (const id of ended) this.forget(id);
  }

  /** Gives the free part of this instance's lease of the account back (awaited); true when something went back. */
  async giveBack(accountId: string): Promise<boolean> {
    const lease = this.byAccount.get(accountId);
    if (!lease) return false;
    await lease.busy;
    const amount = lease.book.surplus();
    if (amount === 0n || !lease.book.beginReturn(amount)) return false;
    let done = false;
    await this.statement(lease, async () => {
      try {
        done = (await this.s.renewLease({ ...this.state(lease), grow: -amount, need: 0n, ttlMs: this.policy.ttlMs }))?.changed ?? false;
      } finally {
        lease.book.endReturn(amount, done);
      }
    });
    return done;
  }

  /** Another instance (or this one) is short of money on the account: give ours back and lease it no more for a while. */
  async wanted(accountId: string): Promise<void> {
    this.wantedUntil.set(accountId, this.now() + (this.opts.wantedBackoffMs ?? DEFAULT_WANTED_BACKOFF_MS));
    await this.giveBack(accountId);
  }

  /** What this instance's requests hold on the leases these batch items name, to be written with them. */
  states(items: SettleRequest[]): LeaseState[] {
    const out = new Map<string, LeaseState>();
    for (const s of items) {
      const a = this.admitted.get(s.requestId);
      if (a && !out.has(a.lease.id)) out.set(a.lease.id, this.state(a.lease));
    }
    return [...out.values()];
  }

  /** What this instance's requests hold on a lease of its own, exactly; undefined for another instance's lease. */
  holding(leaseId: string): bigint | undefined {
    for (const l of this.byAccount.values()) if (l.id === leaseId) return l.book.holding;
    return undefined;
  }

  private state(lease: Lease): LeaseState {
    return { id: lease.id, inFlight: lease.book.inFlight, inUse: lease.book.holding };
  }

  /** What other instances' active leases reserve on the account. */
  leasedElsewhere(accountId: string): Promise<bigint> {
    return this.s.leasedElsewhere(accountId, this.instance);
  }

  /** Returns every lease with nothing owed (call after the last batch is written); the rest expire. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.byAccount.values()].map((l) => l.busy));
    await Promise.allSettled([...this.byAccount.values()].filter((l) => l.book.owed === 0n).map((l) => this.end(l)));
  }

  private isWanted(accountId: string): boolean {
    const until = this.wantedUntil.get(accountId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.wantedUntil.delete(accountId);
    return false;
  }

  private renewIfDue(lease: Lease): void {
    if (lease.busy || lease.ending) return;
    const r = lease.book.renewal();
    if (r) void this.renew(lease, r.grow);
  }

  /** Grows the lease by `grow` if the account can give it (at most half its available balance) and moves its expiry on. */
  private renew(lease: Lease, grow: bigint): Promise<void> {
    const sentAt = this.now();
    return this.statement(lease, async () => {
      const r = await this.s.renewLease({ ...this.state(lease), grow, need: grow * 2n, ttlMs: this.policy.ttlMs });
      if (!r) return this.forget(lease.id);
      if (r.changed) lease.book.grew(grow);
      lease.book.extended(sentAt);
    });
  }

  private async end(lease: Lease): Promise<void> {
    lease.ending = true;
    await this.statement(lease, async () => {
      await this.s.endLease(lease.id);
      this.forget(lease.id);
    }).catch(() => {
      lease.ending = false;
    });
  }

  /** Runs one statement about the lease, after the one under way; failures are logged, and the lease carries on as it was. */
  private statement(lease: Lease, run: () => Promise<void>): Promise<void> {
    const next = (lease.busy ?? Promise.resolve())
      .then(run)
      .catch((err) => {
        this.opts.log?.warn({ err: { message: (err as Error)?.message }, leaseId: lease.id }, 'a balance lease statement failed');
        if (lease.ending) throw err;
      })
      .finally(() => {
        if (lease.busy === next) lease.busy = undefined;
      });
    lease.busy = next;
    return next;
  }

  private forget(leaseId: string): void {
    for (const [account, l] of this.byAccount) if (l.id === leaseId) this.byAccount.delete(account);
  }

  /** Moves expiries on, returns idle leases and what wanted accounts still hold. */
  private tick(): void {
    for (const lease of this.byAccount.values()) {
      if (lease.busy || lease.ending) continue;
      if (lease.book.idle) void this.end(lease);
      else if (this.isWanted(lease.accountId)) void this.giveBack(lease.accountId);
      else this.renewIfDue(lease);
    }
  }
}
