import { sqlState } from './db-errors.js';

/** Errors worth running the same statement again for: PostgreSQL chose it as a deadlock victim. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_RETRIES = 3;

export interface GroupCommitOptions<T> {
  /** Statements allowed to run at once (each on its own pool connection). */
  maxInFlight: number;
  /** Most items one statement carries. */
  maxBatch: number;
  /** Items with the same key never share a statement (they wait for the next one). */
  conflictKey: (item: T) => string;
  /**
   * Wait this long before sending a statement that is not full, so more items join it. Zero for
   * statements a client waits on (holds); a few milliseconds for settles, which nobody waits on.
   */
  lingerMs?: number;
}

interface Entry<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit for ledger statements: an item submitted while every slot is busy waits, and the
 * next statement carries everything that waited. One request alone goes out at once (no timer,
 * no added latency); under load, fifty holds cost one round trip and one commit instead of fifty.
 *
 * `run` executes one statement for a batch and answers one result per item, in order: a value, or
 * an Error for that item alone. When the statement itself fails, each item is run on its own, so
 * one bad item (a duplicate request id, say) fails alone and never takes its neighbours with it.
 */
export class GroupCommit<T, R> {
  private queue: Array<Entry<T, R>> = [];
  private running = 0;
  private lingering?: NodeJS.Timeout;
  /** One promise per submitted item until it has an outcome. */
  private unfinished = new Set<Promise<void>>();

  constructor(
    private readonly run: (items: T[]) => Promise<Array<R | Error>>,
    private readonly opts: GroupCommitOptions<T>,
  ) {}

  submit(item: T): Promise<R> {
    const result = new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    this.unfinished.add(done);
    void done.then(() => this.unfinished.delete(done));
    return result;
  }

  /**
   * Resolves once everything submitted before the call has committed or failed. Later submissions
   * are not waited for, so a reader is never starved by a steady stream of new requests.
   */
  async settled(): Promise<void> {
    await Promise.all([...this.unfinished]);
  }

  private pump(): void {
    const linger = this.opts.lingerMs ?? 0;
    if (linger > 0 && this.queue.length < this.opts.maxBatch) {
      if (!this.lingering && this.queue.length > 0 && this.running < this.opts.maxInFlight) {
        this.lingering = setTimeout(() => {
          this.lingering = undefined;
          this.flush();
        }, linger);
      }
      return;
    }
    this.flush();
  }

  private flush(): void {
    while (this.running < this.opts.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.running++;
      void this.execute(batch).finally(() => {
        this.running--;
        if (this.queue.length > 0) this.pump();
      });
    }
  }

  /** Oldest first, skipping (for the next statement) items whose key this batch already has. */
  private take(): Array<Entry<T, R>> {
    const batch: Array<Entry<T, R>> = [];
    const keys = new Set<string>();
    const rest: Array<Entry<T, R>> = [];
    for (const e of this.queue) {
      const key = this.opts.conflictKey(e.item);
      if (batch.length < this.opts.maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(e);
      } else rest.push(e);
    }
    this.queue = rest;
    return batch;
  }

  private async execute(batch: Array<Entry<T, R>>): Promise<void> {
    let results: Array<R | Error>;
    try {
      results = await this.runWithRetry(batch.map((e) => e.item));
    } catch (e) {
      if (batch.length === 1) return batch[0].reject(e);
      await Promise.all(batch.map((entry) => this.execute([entry])));
      return;
    }
    batch.forEach((entry, i) => {
      const r = results[i];
      if (r instanceof Error) entry.reject(r);
      else entry.resolve(r);
    });
  }

  private async runWithRetry(items: T[]): Promise<Array<R | Error>> {
    for (let attempt = 0; ; attempt++) {
      try {
        const results = await this.run(items);
        if (results.length !== items.length) throw new Error(`ledger batch answered ${results.length} results for ${items.length} items`);
        return results;
      } catch (e) {
        if (attempt >= MAX_RETRIES || !RETRYABLE.has(sqlState(e) ?? '')) throw e;
      }
    }
  }
}
