import { Agent, request } from 'undici';
import type { UsageExportCursor, UsageRecord } from '../ledger/index.js';
import * as metrics from '../util/metrics.js';
import { DEFAULT_BACKOFF, retryDelayMs, type Backoff } from './retry-delay.js';
import { parseWebhookSecret, signWebhook } from './sign-webhook.js';
import { usageBatchMessage, type WebhookMessage } from './webhook-body.js';

export interface ExportLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface UsageWebhookSettings {
  url: string;
  /** The signing secret, `whsec_…` (sign-webhook.ts); messages go unsigned without it. */
  secret?: string;
  /** How old a record must be before it is read (usage-export.ts: longer than any ledger statement runs). */
  marginMs: number;
  /** Records per POST. */
  batchSize?: number;
  /** How often the ledger is looked at while nothing is waiting. */
  pollMs?: number;
  /** How long a claim on the export lasts unless renewed (renewed every third of it). */
  claimMs?: number;
  /** A POST with no whole answer after this long has failed. */
  timeoutMs?: number;
  backoff?: Backoff;
}

export interface UsageWebhookOptions extends UsageWebhookSettings {
  cursor: UsageExportCursor;
  log: ExportLog;
  random?: () => number;
}

export const DEFAULT_BATCH = 100;
const DEFAULT_POLL_MS = 1_000;
export const DEFAULT_CLAIM_MS = 30_000;
/** Standard Webhooks recommends 15 to 30 s. */
const DEFAULT_TIMEOUT_MS = 30_000;

/** Throws, naming the setting, what a usage webhook cannot run with (checked before the gateway opens anything). */
export function checkUsageWebhookSettings(s: UsageWebhookSettings): void {
  if (!URL.canParse(s.url) || !/^https?:$/.test(new URL(s.url).protocol)) throw new Error(`SWITCHYARD_USAGE_WEBHOOK_URL must be an http:// or https:// URL, got ${JSON.stringify(s.url)}`);
  if (s.secret !== undefined) parseWebhookSecret(s.secret, 'SWITCHYARD_USAGE_WEBHOOK_SECRET');
}

type PostResult = { ok: true } | { ok: false; status?: number; retryAfter?: string; error?: string };

/**
 * The usage webhook (DECISIONS.md, "Usage webhook"): delivers every usage record of the ledger to
 * the operator's URL, in batches, at least once. One instance at a time holds the export (the
 * cursor's claim, renewed in the background); it reads the records after the cursor, POSTs them
 * until a 2xx comes back, retrying with backoff for as long as it takes, then moves the cursor.
 * It holds one batch at a time, never touches a request's path, and stopping it loses nothing:
 * what was not acknowledged is read again by the next holder.
 */
export class UsageWebhook {
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly claimMs: number;
  private readonly timeoutMs: number;
  private readonly backoff: Backoff;
  private readonly random: () => number;
  private readonly key: Buffer | undefined;
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });
  private readonly aborts = new AbortController();
  private stopped = false;
  /** Set on a 410 Gone: the receiver asked for no more (Standard Webhooks); the records stay in the ledger. */
  private gone = false;
  /** When the last claim or advance succeeded: the claim is believed until claimMs after it. */
  private claimedAt: number | undefined;
  private renewal: Promise<void> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly opts: UsageWebhookOptions) {
    this.batchSize = opts.batchSize ?? DEFAULT_BATCH;
    this.pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
    this.claimMs = opts.claimMs ?? DEFAULT_CLAIM_MS;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.random = opts.random ?? Math.random;
    this.key = opts.secret === undefined ? undefined : parseWebhookSecret(opts.secret, 'SWITCHYARD_USAGE_WEBHOOK_SECRET');
  }

  start(): void {
    this.renewTimer = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.claimMs / 3)));
    this.renewTimer.unref();
    this.loop = this.run().catch((err) => this.opts.log.error({ err }, 'usage webhook: the export stopped on an error'));
  }

  /** Stops delivering (a POST under way is abandoned: its records go again) and gives the claim back. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.renewTimer);
    this.aborts.abort();
    this.wake?.();
    await this.loop;
    await this.renewal;
    if (this.claimedAt !== undefined) await this.opts.cursor.release().catch((err) => this.opts.log.warn({ err }, 'usage webhook: could not give the claim back; another instance takes over when it lapses'));
    await this.agent.close();
  }

  private holds(): boolean {
    return this.claimedAt !== undefined && Date.now() - this.claimedAt < this.claimMs;
  }

  private renew(): Promise<void> {
    if (this.stopped || this.gone) return Promise.resolve();
    this.renewal ??= (async () => {
      const asked = Date.now();
      try {
        const held = await this.opts.cursor.claim(this.claimMs);
        const was = this.claimedAt !== undefined;
        if (held !== was) this.opts.log.info({ holder: this.opts.cursor.holder }, held ? 'usage webhook: this instance delivers' : 'usage webhook: another instance delivers');
        this.claimedAt = held ? asked : undefined;
        // Only a claim newly obtained ends the wait for one (never a retry's backoff).
        if (held && !was) this.wake?.();
      } catch (err) {
        this.opts.log.warn({ err }, 'usage webhook: could not renew the claim on the export');
      } finally {
        this.renewal = undefined;
      }
    })();
    return this.renewal;
  }

  private async run(): Promise<void> {
    await this.renew();
    let readFailures = 0;
    while (!this.stopped && !this.gone) {
      if (!this.holds()) {
        await this.sleep(Math.max(1, Math.floor(this.claimMs / 3)));
        continue;
      }
      let batch: UsageRecord[];
      try {
        batch = await this.opts.cursor.pending(this.opts.marginMs, this.batchSize);
        readFailures = 0;
      } catch (err) {
        // The database is away: tried again with the same backoff as a delivery, not every poll.
        const retryInMs = retryDelayMs(readFailures++, undefined, Date.now(), this.random, this.backoff);
        this.opts.log.warn({ err, retryInMs }, 'usage webhook: could not read the usage records; trying again');
        await this.sleep(retryInMs);
        continue;
      }
      if (batch.length === 0) {
        await this.sleep(this.pollMs);
        continue;
      }
      if ((await this.deliver(batch)) && (await this.advance(batch)) && batch.length < this.batchSize) await this.sleep(this.pollMs);
    }
  }

  /** POSTs the batch until a 2xx; false when it stopped first (stopping, the claim lost, 410). */
  private async deliver(batch: UsageRecord[]): Promise<boolean> {
    const message = usageBatchMessage(batch);
    for (let attempt = 0; !this.stopped; attempt++) {
      if (!this.holds()) return false;
      const result = await this.post(message);
      if (result.ok) {
        if (attempt > 0) this.opts.log.info({ webhookId: message.id, records: batch.length, tries: attempt + 1 }, 'usage webhook: delivered after retrying');
        return true;
      }
      if (this.stopped) return false;
      metrics.usageWebhookFailures.inc({ status: result.status === undefined ? 'error' : String(result.status) });
      if (result.status === 410) {
        this.gone = true;
        this.opts.log.error({ webhookId: message.id }, 'usage webhook: the receiver answered 410 Gone; this instance delivers no more until it restarts (the records stay in the ledger)');
        // Given back at once: another instance, perhaps configured anew, may take over.
        this.claimedAt = undefined;
        await this.opts.cursor.release().catch((err) => this.opts.log.warn({ err }, 'usage webhook: could not give the claim back; it lapses'));
        return false;
      }
      const delayMs = retryDelayMs(attempt, result.retryAfter, Date.now(), this.random, this.backoff);
      const { status, error } = result;
      this.opts.log.warn({ status, error, webhookId: message.id, records: batch.length, first: batch[0].requestId, tries: attempt + 1, retryInMs: delayMs }, 'usage webhook: delivery failed; retrying');
      await this.sleep(delayMs);
    }
    return false;
  }

  /** Moves the cursor past a delivered batch, retrying the database; false when the claim was lost (the batch may go again). */
  private async advance(batch: UsageRecord[]): Promise<boolean> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        const asked = Date.now();
        if (await this.opts.cursor.advance(batch.at(-1)!, batch.length, this.claimMs)) {
          this.claimedAt = asked;
          metrics.usageWebhookRecords.inc(batch.length);
          metrics.usageWebhookCursor.set(batch.at(-1)!.createdAt.getTime() / 1000);
          return true;
        }
        this.claimedAt = undefined;
        this.opts.log.warn({ holder: this.opts.cursor.holder }, 'usage webhook: the claim passed to another instance during a delivery; it reads from the cursor');
        return false;
      } catch (err) {
        this.opts.log.warn({ err }, 'usage webhook: delivered, but the cursor could not be moved; trying again');
        await this.sleep(retryDelayMs(attempt, undefined, Date.now(), this.random, this.backoff));
      }
    }
    return false;
  }

  private async post(m: WebhookMessage): Promise<PostResult> {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'switchyard-usage-webhook',
      'webhook-id': m.id,
      'webhook-timestamp': String(timestamp),
    };
    if (this.key) headers['webhook-signature'] = signWebhook(this.key, m.id, timestamp, m.body);
    try {
      const signal = AbortSignal.any([this.aborts.signal, AbortSignal.timeout(this.timeoutMs)]);
      const res = await request(this.opts.url, { method: 'POST', headers, body: m.body, dispatcher: this.agent, signal });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true };
      const retryAfter = res.headers['retry-after'];
      return { ok: false, status: res.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }

  /** Waits `ms`, or less when stopped or when the claim is obtained. */
  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wake = done;
    });
  }
}
