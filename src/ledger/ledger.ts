import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { Database } from './schema.js';
import type {
  KeyAuth, UserPrincipal, Account, HoldBudget, HoldRequest, JournalEntry, KeyRecord, SettleRequest, UsageFilter, UsageRecord, UsageRecordInput,
} from './types.js';
import { connect, migrate, type ConnectOptions } from './connect.js';
import type { LedgerStatements } from './statements.js';
import { dataDirFromEnv, embeddedFromEnv } from './data-dir.js';
import { createAccount, credit, getAccount, listAccounts, type LeaseHolding } from './accounts.js';
import { authenticate, createKey, getKey, listKeys, revokeKey, updateKey, type KeySettings } from './keys.js';
import { getUser, listUsers, seeUser, setUserDisabled, type UserRecord } from './users.js';
import { appendAudit, listAudit, type AuditChange, type AuditEntry, type AuditFilter } from './audit.js';
import { hashKey, KEY_PREFIX } from './ids.js';
import { KeyCache } from './key-cache.js';
import { HoldForecast } from './hold-forecast.js';
import { GroupCommit } from './group-commit.js';
import { leasedAtRefusal, placeHolds } from './place-hold.js';
import { extendHold } from './extend-hold.js';
import { chargedTotal, checkCharges, settleMany, type SettleResult } from './settle.js';
import { reapExpired, release } from './release.js';
import { balanceCheck, ledgerEntries, usageRecords } from './read-ledger.js';
import { claimSpool, spoolSettles } from './spool.js';
import { budgetStatus, ownedBudgetStatus, type BudgetStatus } from './budgets.js';
import { Leases, type LeaseOptions } from './leases.js';
import { holdsPlaced } from '../util/metrics.js';
import { DEFAULT_LEASE_POLICY } from './lease-book.js';
import { EMBEDDED_LISTENER, type LedgerEvent, type LedgerListener } from './statements.js';
import { spendSummary, type SpendGroup, type SpendQuery } from './spend.js';

export interface LedgerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface LedgerOptions extends ConnectOptions {
  log?: LedgerLog;
  /**
   * Where settles the database did not take by close are written, to be applied by the next
   * open (see spool.ts). Without it they are logged and lost.
   */
  spoolPath?: string;
  /** Balance leases (leases.ts): on unless false; SWITCHYARD_LEASES=off turns them off from the environment. */
  leases?: boolean | Omit<LeaseOptions, 'log'>;
}

/** The spool file's name, in the data directory. */
export const SPOOL_FILE = 'unsettled-settles.jsonl';

/** Default hold lifetime: longer than any request may run, so the reaper only frees orphans. */
export const DEFAULT_HOLD_TTL_MS = 15 * 60 * 1000;

/**
 * DATABASE_URL selects PostgreSQL (postgres://) or a SQLite file (sqlite:PATH); otherwise the
 * embedded database (SWITCHYARD_EMBEDDED_DB, see embeddedFromEnv) in SWITCHYARD_DATA_DIR (default
 * ./data). Timeouts: see serve.ts.
 */
export function ledgerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): LedgerOptions {
  // The spool sits in the data directory on PostgreSQL too: it is this host's, like the process.
  const dataDir = dataDirFromEnv(env);
  const spoolPath = join(dataDir, SPOOL_FILE);
  const leases = leaseOptionsFromEnv(env);
  if (!env.DATABASE_URL) return { dataDir, embedded: embeddedFromEnv(dataDir, env), spoolPath, leases };
  return { databaseUrl: env.DATABASE_URL, schema: env.SWITCHYARD_DB_SCHEMA || undefined, spoolPath, leases };
}

/** SWITCHYARD_LEASES=off: every hold in the database; SWITCHYARD_LEASE_TTL_MS: a lease's lifetime (60 s). */
function leaseOptionsFromEnv(env: NodeJS.ProcessEnv): LedgerOptions['leases'] {
  if (env.SWITCHYARD_LEASES === 'off') return false;
  const ttl = Number(env.SWITCHYARD_LEASE_TTL_MS);
  return Number.isInteger(ttl) && ttl > 0 ? { policy: { ...DEFAULT_LEASE_POLICY, ttlMs: ttl } } : true;
}

/** Connects (see connect.ts for which database) and runs the migrations. */
export async function openLedger(opts: LedgerOptions = {}): Promise<Ledger> {
  const statements = await connect(opts);
  try {
    const applied = await migrate(statements);
    if (applied.length > 0) opts.log?.info({ migrations: applied }, 'ledger migrated');
  } catch (e) {
    await statements.db.destroy();
    throw e;
  }
  const leases = opts.leases === false ? undefined : opts.leases === true || opts.leases === undefined ? {} : opts.leases;
  const ledger = new Ledger(statements, opts.log, opts.spoolPath, leases);
  try {
    await ledger.listen();
  } catch (e) {
    await ledger.close();
    throw e;
  }
  await ledger.applySpool();
  return ledger;
}

/** Statements wait for a slot rather than a timer, so this only caps the size of one statement. */
const MAX_BATCH = 100;
/**
 * How long a settle waits for company before its statement goes out. Kept short: a process killed
 * with SIGKILL leaves the holds of its last SETTLE_LINGER_MS of answered requests unbilled (the
 * reaper releases them). 20 ms was measured and gave nothing (DECISIONS.md, "Hot path").
 */
const SETTLE_LINGER_MS = 5;
/** Hold statements allowed to run at once; settles run one statement at a time. */
const HOLD_STATEMENTS_IN_FLIGHT = 1;
/** How long a verified API key is answered from memory (see KeyCache). */
const KEY_CACHE_TTL_MS = 60_000;
/** How long a seen user is answered from memory (its disabling is announced, see seeUser). */
const USER_CACHE_MS = 60_000;
const USER_CACHE_MAX = 100_000;
/** How long the balance read by a hold is believed by the forecast (see HoldForecast). */
const FORECAST_TTL_MS = 10_000;
/** A failed settle is tried again after 200 ms, doubling up to this. */
const SETTLE_RETRY_MAX_MS = 5_000;
/** At close, how long settles being retried get to succeed before what is left is spooled. */
const CLOSE_SETTLE_WAIT_MS = 3_000;
/**
 * How long the ended requests of leases wait for company before their batch goes out. What a
 * process killed with SIGKILL leaves unwritten is its requests in flight and at most this much of
 * ended ones (the reaper gives the leases' unused part back at their expiry).
 */
const LEASE_FLUSH_LINGER_MS = 10;
/** Most ended requests one batch statement writes. */
const LEASE_FLUSH_MAX_BATCH = 500;
/** A hold refused while other instances' leases reserve part of the account waits at most this long for them to give it back. */
const LEASES_WANTED_WAIT_MS = 500;
const LEASES_WANTED_POLL_MS = 25;
/**
 * A batch of leased requests unanswered for this long means the database is slow or away: leases
 * admit nothing more until the batches go through again, so what a SIGKILL during an outage could
 * leave unwritten stays the requests in flight and about this much of ended ones.
 */
const LEASE_WRITE_STALL_MS = 250;

const fromLease = holdsPlaced.labels('lease');
const fromDatabase = holdsPlaced.labels('database');

/** Errors worth trying a settle again for: the database's, not the caller's (a malformed charge, no hold). */
const retryable = (e: unknown) => !(e instanceof GatewayError);

/**
 * The token-billing ledger. Each money operation is one SQL statement; see the files per operation.
 * Holds and settles go through a group commit: concurrent requests share statements (and commits).
 */
export class Ledger {
  private readonly keys: KeyCache;
  private readonly forecast: HoldForecast;
  private readonly holds: GroupCommit<HoldRequest, bigint>;
  private readonly settles: GroupCommit<SettleRequest, SettleResult>;
  /** Balance leases of this instance (leases.ts); undefined when they are off. */
  private readonly leases?: Leases;
  /** The ended requests of leases, written in batches. */
  private readonly leaseFlushes: GroupCommit<SettleRequest, SettleResult>;
  private listener: LedgerListener = EMBEDDED_LISTENER;
  /** What this instance's requests hold on a lease of its own, for the accounts as clients see them (accounts.ts). */
  private readonly leaseHolding?: LeaseHolding;
  /** The batches of leased requests under way, each with when it was sent. */
  private readonly leaseWrites = new Set<{ sentAt: number }>();
  /** Leased requests whose batch failed and are being retried (or spooled at close). */
  private leasedUnsettled = 0;
  private readonly keyListeners = new Set<(keyId: string) => void>();
  /** Users seen lately (see seeUser). */
  private readonly users = new Map<string, { record: UserRecord; until: number }>();
  /** Settles that failed and are being tried again, by request id: spooled if still here at close. */
  private readonly unsettled = new Map<string, SettleRequest>();
  private readonly retries = new Set<Promise<unknown>>();
  private readonly wakeRetries = new Set<() => void>();
  private closing = false;

  /** Exposed for tests and admin tooling; everything else goes through the methods. */
  readonly db: Kysely<Database>;

  constructor(
    /** This database's statements (chosen by connect.ts); exposed for the response store and tests. */
    readonly statements: LedgerStatements,
    private readonly log?: LedgerLog,
    private readonly spoolPath?: string,
    leases?: Omit<LeaseOptions, 'log'>,
  ) {
    this.db = statements.db;
    this.keys = new KeyCache({ ttlMs: KEY_CACHE_TTL_MS, maxEntries: 100_000 });
    this.forecast = new HoldForecast({ ttlMs: FORECAST_TTL_MS, maxEntries: 100_000 });
    this.holds = new GroupCommit((hs) => placeHolds(this.statements, hs), {
      maxInFlight: HOLD_STATEMENTS_IN_FLIGHT,
      maxBatch: MAX_BATCH,
      // One account's holds share a statement (folded into one update of its row); one request id never does.
      conflictKey: (h) => h.requestId,
    });
    this.settles = new GroupCommit((ss) => settleMany(this.statements, ss), {
      // Nobody waits on a settle: one statement at a time, lingering a little, collects the most.
      maxInFlight: 1,
      maxBatch: MAX_BATCH,
      conflictKey: (s) => s.requestId,
      lingerMs: SETTLE_LINGER_MS,
    });
    if (leases) this.leases = new Leases(statements, { ...leases, log });
    this.leaseHolding = this.leases && ((leaseId) => this.leases!.holding(leaseId));
    this.leaseFlushes = new GroupCommit((items) => this.writeLeased(items), {
      maxInFlight: 1,
      maxBatch: LEASE_FLUSH_MAX_BATCH,
      conflictKey: (s) => s.requestId,
      lingerMs: LEASE_FLUSH_LINGER_MS,
    });
  }

  /**
   * Listens for other instances' announcements (statements.ts): a key or user changed elsewhere is
   * dropped from the caches here, and an account whose leases another instance wants back gets
   * this instance's unused part back. While announcements may have been missed, every cached key
   * and user is dropped (and no lease is served until the listener is back).
   */
  async listen(): Promise<void> {
    this.listener = await this.statements.listen(
      (event: LedgerEvent, id: string) => {
        if (event === 'key') this.forgetKey(id);
        else void this.leases?.wanted(id);
      },
      () => this.forgetAll(),
    );
  }

  private forgetAll(): void {
    this.keys.clear();
    this.users.clear();
  }

  /**
   * Waits for the holds and settles already submitted; gives settles being retried (the database
   * was away) `settleWaitMs` more, writes what is still unsettled to the spool for the next open,
   * then closes the connections.
   */
  async close(settleWaitMs = CLOSE_SETTLE_WAIT_MS): Promise<void> {
    await this.settled();
    if (this.retries.size > 0) await Promise.race([Promise.allSettled([...this.retries]), new Promise((r) => setTimeout(r, settleWaitMs))]);
    this.closing = true;
    for (const wake of this.wakeRetries) wake();
    await Promise.allSettled([...this.retries]);
    await this.spoolUnsettled();
    // Every lease with nothing owed goes back; one still owing (its batch was spooled) expires, and
    // the spooled captures are then applied as late ones.
    await this.leases?.close();
    await this.listener.close();
    return this.db.destroy();
  }

  /** One round trip to the database (readiness): throws when it cannot be reached. */
  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.db);
  }

  /** Settles that are being retried right now (for tests and the request log). */
  get unsettledCount(): number {
    return this.unsettled.size;
  }

  private async spoolUnsettled(): Promise<void> {
    const left = [...this.unsettled.values()];
    if (left.length === 0) return;
    const requestIds = left.map((s) => s.requestId);
    if (!this.spoolPath) return this.log?.error({ requestIds }, 'settles not written and no spool file: these requests are not billed');
    await mkdir(dirname(this.spoolPath), { recursive: true });
    await spoolSettles(this.spoolPath, left);
    this.log?.warn({ spool: this.spoolPath, requestIds }, 'settles the database did not take were spooled; the next start applies them');
  }

  /** Applies the settles a previous process spooled (at open). Idempotent: an applied one changes nothing. */
  async applySpool(): Promise<void> {
    if (!this.spoolPath) return;
    const { settles, done } = await claimSpool(this.spoolPath);
    if (settles.length === 0) return done();
    const results = await Promise.allSettled(settles.map((s) => this.settleOnce(s)));
    const again = settles.filter((_, i) => results[i].status === 'rejected' && retryable((results[i] as PromiseRejectedResult).reason));
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected' && !retryable(r.reason)) this.log?.error({ requestId: settles[i].requestId, err: r.reason }, 'a spooled settle was refused');
    }
    await spoolSettles(this.spoolPath, again);
    await done();
    this.log?.info({ applied: settles.length - again.length, kept: again.length }, 'applied the spooled settles');
  }

  /** Resolves once every hold and settle submitted before the call has committed (or failed). */
  async settled(): Promise<void> {
    await Promise.all([this.holds.settled(), this.settles.settled(), this.leaseFlushes.settled()]);
  }

  createAccount(name: string, initialBalance?: bigint): Promise<Account> {
    return createAccount(this.statements, name, initialBalance);
  }
  /** Reads wait for submitted settles first, so a caller reads its own completed requests. */
  async getAccount(id: string): Promise<Account | undefined> {
    await this.settled();
    return getAccount(this.db, id, this.leaseHolding);
  }
  /** Reads wait for submitted settles first, as getAccount does. */
  async listAccounts(limit?: number, beforeId?: string): Promise<Account[]> {
    await this.settled();
    return listAccounts(this.db, limit, beforeId, this.leaseHolding);
  }
  createKey(accountId: string, settings?: KeySettings): Promise<{ key: string; record: KeyRecord }> {
    return createKey(this.statements, accountId, settings);
  }
  listKeys(accountId?: string): Promise<KeyRecord[]> {
    return listKeys(this.statements, accountId);
  }
  /** One key as the admin API shows it (revoked ones too); undefined when unknown. */
  async getKey(keyId: string): Promise<KeyRecord | undefined> {
    return getKey(this.statements, keyId);
  }
  async revokeKey(keyId: string): Promise<KeyRecord | undefined> {
    const record = await revokeKey(this.statements, keyId);
    this.keyChanged(keyId);
    return record;
  }
  async updateKey(keyId: string, settings: KeySettings): Promise<KeyRecord | undefined> {
    const record = await updateKey(this.statements, keyId, settings);
    this.keyChanged(keyId);
    return record;
  }
  /**
   * Calls `listener` with the id of every key revoked or changed through this ledger, so other
   * instances can be told (see app/key-events.ts). Returns the way to stop.
   */
  onKeyChanged(listener: (keyId: string) => void): () => void {
    this.keyListeners.add(listener);
    return () => this.keyListeners.delete(listener);
  }
  /** Drops a key (or user) changed elsewhere (by another instance) from this instance's caches. */
  forgetKey(keyId: string): void {
    this.keys.evictKeyId(keyId);
    this.users.delete(keyId);
  }
  private keyChanged(keyId: string): void {
    this.forgetKey(keyId);
    for (const listener of this.keyListeners) listener(keyId);
  }

  /**
   * A user signed in through the identity provider: recorded on first sight under `accountId`,
   * then seen again at most once a minute per instance (the answer cached meanwhile). Disabling
   * through any instance evicts the user here and, announced as a key change is, on every
   * instance (app/key-events.ts).
   */
  async seeUser(user: UserPrincipal, accountId: string): Promise<UserRecord> {
    const cached = this.users.get(user.id);
    if (cached && cached.until > Date.now()) return cached.record;
    const version = this.keys.version();
    const record = await seeUser(this.statements, user, accountId);
    if (version === this.keys.version()) {
      if (this.users.size >= USER_CACHE_MAX) this.users.delete(this.users.keys().next().value!);
      this.users.set(user.id, { record, until: Date.now() + USER_CACHE_MS });
    }
    return record;
  }
  getUser(id: string): Promise<UserRecord | undefined> {
    return getUser(this.statements, id);
  }
  listUsers(q: { accountId?: string; limit: number; afterId?: string }): Promise<UserRecord[]> {
    return listUsers(this.statements, q);
  }
  async setUserDisabled(id: string, disabled: boolean): Promise<UserRecord | undefined> {
    const record = await setUserDisabled(this.statements, id, disabled);
    this.keyChanged(id);
    return record;
  }
  /** Appends an admin change to the audit log (append-only: the database refuses to alter it). */
  audit(change: AuditChange): Promise<void> {
    return appendAudit(this.statements, change);
  }
  listAudit(filter: AuditFilter): Promise<AuditEntry[]> {
    return listAudit(this.statements, filter);
  }
  /** Verified keys are cached (see KeyCache); holds re-check revocation, so money never trusts the cache. */
  async authenticate(rawKey: string): Promise<KeyAuth | undefined> {
    if (!rawKey.startsWith(KEY_PREFIX)) return undefined;
    const hash = hashKey(rawKey);
    const cached = this.keys.get(hash);
    // Expiry is checked at every use: a cached key past its time is refused as a revoked one is.
    if (cached) return cached.expiresAt !== undefined && cached.expiresAt <= Date.now() ? undefined : cached;
    const version = this.keys.version();
    const auth = await authenticate(this.statements, hash);
    if (auth) this.keys.set(hash, auth, version);
    return auth;
  }

  /** A correction (negative) may not go below what is held: this instance's unused lease of the account goes back first. */
  async credit(accountId: string, amount: bigint, reason: string): Promise<JournalEntry> {
    if (amount < 0n) await this.leases?.giveBack(accountId);
    return credit(this.statements, accountId, amount, reason);
  }
  /**
   * True when, as far as this instance knows, the account can afford a hold of `amount` in the
   * database now. A hint for starting the upstream call while that hold commits, never a reason
   * to move money: only placeHold decides. A hold served from a lease has no commit to overlap.
   */
  holdLikelyPasses(accountId: string, amount: bigint): boolean {
    return this.forecast.covers(accountId, amount);
  }
  /**
   * Reserves the request's worst case: from this instance's balance lease of the account when the
   * request may be served from one (`leasable`) and the lease covers it, asking the lease for more
   * if it is short; otherwise as a hold in the database. A hold refused for the balance while
   * leases reserve part of the account gets them back first (`makeRoom`), so a request is refused
   * only when the balance and every instance's unused leases together cannot cover it.
   */
  async placeHold(h: HoldRequest): Promise<void> {
    if (this.leases?.has(h.requestId)) throw new GatewayError('conflict', `a hold for request ${h.requestId} already exists`);
    const leases = this.leasable(h) ? this.leases : undefined;
    if (leases && (leases.admit(h) || (await leases.grow(h)))) return fromLease.inc();
    try {
      const available = await this.placeExact(h);
      leases?.placedExact(h, available);
    } catch (e) {
      // Refused for the balance while leases (this instance's or others') reserve part of it.
      if (!this.leases || !(e instanceof GatewayError) || e.kind !== 'insufficient_balance' || !leasedAtRefusal(e)) throw e;
      await this.makeRoom(h, e);
    }
    fromDatabase.inc();
  }

  private async placeExact(h: HoldRequest): Promise<bigint> {
    this.forecast.submitted(h.accountId, h.amount);
    try {
      const available = await this.holds.submit(h);
      this.forecast.answered(h.accountId, h.amount, available);
      return available;
    } catch (e) {
      this.forecast.answered(h.accountId, h.amount, undefined);
      if (h.keyId && e instanceof GatewayError && e.kind === 'authentication') this.keys.evictKeyId(h.keyId);
      throw e;
    }
  }

  /**
   * A hold takes no budget and its key (if any) is one this instance verified and still answers
   * for: a lease may serve it. Only while this instance hears every other's announcements, so a
   * key revoked anywhere is dropped here before it could spend from a lease.
   */
  private leasable(h: HoldRequest): boolean {
    if (!this.leases || !this.listener.listening || (h.budgets && h.budgets.length > 0) || this.leaseWritesStalled()) return false;
    if (h.keyId === undefined) return true;
    const key = this.keys.byKeyId(h.keyId);
    return !!key && key.accountId === h.accountId && !key.keyBudgets && (key.expiresAt === undefined || key.expiresAt > Date.now());
  }

  /**
   * The balance refused `h` (`refusal`): this instance's lease of the account gives its unused part
   * back and the hold is tried again; while other instances' leases reserve part of the account,
   * they are asked for it (`wanted`) and the hold is tried again every 25 ms, for up to 500 ms. The
   * refusal stands once nobody's lease holds anything that could help, or the time is up.
   */
  private async makeRoom(h: HoldRequest, refusal: GatewayError): Promise<void> {
    const leases = this.leases!;
    const until = Date.now() + LEASES_WANTED_WAIT_MS;
    let asked = false;
    let last = refusal;
    for (;;) {
      // Something may have come back (ours now, or theirs since we asked): try again.
      if ((await leases.giveBack(h.accountId)) || asked) {
        try {
          await this.placeExact(h);
          return;
        } catch (e) {
          if (!(e instanceof GatewayError) || e.kind !== 'insufficient_balance') throw e;
          last = e;
        }
      }
      // Refused with no lease of the account left anywhere: nothing could cover it.
      const elsewhere = leasedAtRefusal(last) ? await leases.leasedElsewhere(h.accountId) : 0n;
      if (elsewhere === 0n) throw last;
      if (!asked) {
        asked = true;
        void leases.wanted(h.accountId);
        await this.statements.announce('wanted', h.accountId).catch((err) => this.log?.warn({ err }, 'could not ask the other instances for their leases'));
      }
      if (Date.now() >= until) throw last;
      await new Promise((r) => setTimeout(r, LEASES_WANTED_POLL_MS));
    }
  }

  /**
   * Settles a request. When the database cannot take it, it is tried again with backoff until it
   * does (the answer already went out; the hold keeps covering it meanwhile), and what is still
   * unwritten at close is spooled for the next start.
   */
  async settle(request: SettleRequest): Promise<SettleResult> {
    // A leased request frees its lease's room now; its batch item carries the lease from here on.
    return this.settleItem(this.leases?.has(request.requestId) ? this.leases.ended(request) : request);
  }

  private async settleItem(s: SettleRequest): Promise<SettleResult> {
    try {
      return await this.settleOnce(s);
    } catch (e) {
      if (!retryable(e) || this.closing) throw e;
      this.unsettled.set(s.requestId, s);
      const retry = this.retrySettle(s, e);
      this.retries.add(retry);
      if (s.lease) this.leasedUnsettled++;
      void retry
        .catch(() => undefined)
        .finally(() => {
          this.retries.delete(retry);
          if (s.lease) this.leasedUnsettled--;
        });
      return retry;
    }
  }

  private async retrySettle(s: SettleRequest, firstError: unknown): Promise<SettleResult> {
    let err = firstError;
    for (let attempt = 1; ; attempt++) {
      this.log?.warn({ requestId: s.requestId, attempt, err: { message: (err as Error)?.message, code: (err as { code?: string })?.code } }, 'settle failed; trying again');
      await this.pause(Math.min(SETTLE_RETRY_MAX_MS, 100 * 2 ** attempt));
      if (this.closing) throw new Error(`ledger closing: the settle of ${s.requestId} is spooled`);
      try {
        const result = await this.settleOnce(s);
        this.unsettled.delete(s.requestId);
        this.log?.info({ requestId: s.requestId, attempts: attempt + 1 }, 'settle written after retrying');
        return result;
      } catch (e) {
        if (!retryable(e)) {
          this.unsettled.delete(s.requestId);
          throw e;
        }
        err = e;
      }
    }
  }

  /** Sleeps `ms`, or less when close wants the retries to stop. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakeRetries.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakeRetries.add(wake);
    });
  }

  private async settleOnce(s: SettleRequest): Promise<SettleResult> {
    if (s.lease) return this.leaseFlushes.submit(s);
    let result = await this.settles.submit(s);
    if (!result.settled) {
      let status = await this.holdStatus(s.requestId);
      // The reaper expired the hold while this statement ran: the next one captures it late.
      if (status === 'expired') {
        result = await this.settles.submit(s);
        status = await this.holdStatus(s.requestId);
      }
      if (status !== 'settled') {
        this.log?.warn({ requestId: s.requestId, holdStatus: status, charges: s.charges.length }, 'settle found no hold to capture; usage not billed');
      }
    }
    return result;
  }
  /** Keeps a hold alive (a leased request needs nothing: its lease is kept alive by its instance). */
  async extendHold(requestId: string, ttlMs: number): Promise<boolean> {
    if (this.leases?.has(requestId)) return true;
    return extendHold(this.statements, requestId, ttlMs);
  }
  async release(requestId: string, record?: UsageRecordInput): Promise<boolean> {
    if (this.leases?.has(requestId)) {
      const item = this.leases.released(requestId, record);
      if (item) await this.settleItem(item);
      return true;
    }
    return release(this.statements, requestId, record);
  }
  /**
   * Expires pending holds and leases past their time. A lease that expires was never returned: its
   * instance stopped without returning it (SIGKILL, a crash, a lost network), and the requests it
   * was running then (its last write's count) are not billed; that is logged here.
   */
  async reapExpired(now?: Date): Promise<number> {
    const holds = await reapExpired(this.statements, now);
    const leases = await this.statements.reapLeases(now, 1000);
    for (const l of leases) {
      this.log?.warn(
        { leaseId: l.id, accountId: l.account_id, instance: l.instance, returned: l.amount.toString(), inFlight: l.in_flight },
        `a balance lease expired unreturned (its instance stopped without returning it): its unused part went back to the account; ${l.in_flight} request(s) it was running at its last write are not billed`,
      );
    }
    return holds + leases.length;
  }

  /** The database is not taking the batches of leased requests: one is failing, or has been under way too long. */
  private leaseWritesStalled(): boolean {
    if (this.leasedUnsettled > 0) return true;
    const now = performance.now();
    for (const w of this.leaseWrites) if (now - w.sentAt > LEASE_WRITE_STALL_MS) return true;
    return false;
  }

  /** One batch of ended leased requests (see settleLeased): each is written at most once. */
  private async writeLeased(items: SettleRequest[]): Promise<Array<SettleResult | Error>> {
    for (const item of items) checkCharges(item.charges);
    const write = { sentAt: performance.now() };
    this.leaseWrites.add(write);
    let answer: { written: string[]; ended: string[] };
    try {
      answer = await this.statements.settleLeased(items, this.leases?.states(items) ?? []);
    } finally {
      this.leaseWrites.delete(write);
    }
    const { written, ended } = answer;
    this.leases?.written(items, ended);
    const done = new Set(written);
    return items.map((s) => ({ captured: chargedTotal(s.charges), settled: done.has(s.requestId) }));
  }

  async ledgerEntries(accountId: string, limit?: number, beforeId?: bigint): Promise<JournalEntry[]> {
    await this.settled();
    return ledgerEntries(this.db, accountId, limit, beforeId);
  }
  async usageRecords(accountId: string, limit?: number, beforeRequestId?: string, filter?: UsageFilter): Promise<UsageRecord[]> {
    await this.settled();
    return usageRecords(this.db, accountId, limit, beforeRequestId, filter);
  }
  /** A key's budgets in their current periods; reads wait for submitted settles first. */
  async budgetStatus(keyId: string): Promise<BudgetStatus[]> {
    await this.settled();
    return budgetStatus(this.statements, keyId);
  }
  /** A user's and their groups' budgets (as the identity policy sets them) in their current periods. */
  async ownedBudgetStatus(budgets: HoldBudget[]): Promise<BudgetStatus[]> {
    await this.settled();
    return ownedBudgetStatus(this.statements, budgets);
  }
  /** Usage summed by group over a time range; reads wait for submitted settles first. */
  async spendSummary(q: SpendQuery): Promise<SpendGroup[]> {
    await this.settled();
    return spendSummary(this.statements, q);
  }
  async balanceCheck(): Promise<{ ok: boolean; problems: string[] }> {
    await this.settled();
    return balanceCheck(this.db);
  }

  private async holdStatus(requestId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('holds').select('status').where('id', '=', requestId).executeTakeFirst();
    return row?.status;
  }
}

