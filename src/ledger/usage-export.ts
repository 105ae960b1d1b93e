import type { LedgerStatements } from './statements.js';
import type { UsageRecord } from './types.js';
import { toUsageRecord } from './rows.js';

/**
 * A usage export's place in the ledger (the webhook's, export/usage-webhook.ts). The usage records
 * are the record of truth, so the table is the outbox: an export reads the records after its
 * cursor, delivers them, and only then moves the cursor to the last one it delivered. Nothing is
 * written beside a record when it is made, so the export costs nothing while it is off, and it
 * reads only `usage_records`, whoever wrote a record and however.
 *
 * **Which records are read.** Records are ordered by (created_at, request_id), and a record is
 * read once it is older than a margin by the clock that stamped it (the database's on PostgreSQL,
 * whose created_at is now() of the inserting statement; this process's on SQLite). Commit order is
 * not created_at order: a statement stamped earlier may commit after one stamped later, so a plain
 * "after the cursor" read could pass a record that was not yet visible and never return to it.
 * Every statement that writes a usage record ends within the database's statement timeout (it is
 * cancelled otherwise, and its records with it), so once the margin is longer than that timeout
 * plus the commit, every record stamped before now - margin is visible, and none can appear
 * behind the cursor later. The margin is the export's delay (see serve.ts for its default).
 *
 * **One exporter at a time.** The cursor row names the instance that holds the export and until
 * when; the holder renews its claim while it runs, another instance takes over when a claim
 * lapses (its holder died) or is given back (its holder stopped). Moving the cursor requires the
 * claim and only moves it forward, so a holder that stalled past its claim cannot take the cursor
 * back: at worst a batch is delivered twice. Delivery is at least once; receivers deduplicate by
 * request id.
 */
export class UsageExportCursor {
  constructor(
    private readonly statements: LedgerStatements,
    /** The export's name (its cursor row). */
    readonly name: string,
    /** This instance, as the cursor row names it while it exports. */
    readonly holder: string,
  ) {}

  /** Takes or renews the claim for `ttlMs`; false while another instance holds it. */
  claim(ttlMs: number): Promise<boolean> {
    return this.statements.claimUsageExport(this.name, this.holder, positive(ttlMs, 'ttlMs'));
  }

  /** Up to `limit` records after the cursor stamped more than `marginMs` ago, oldest first. */
  async pending(marginMs: number, limit: number): Promise<UsageRecord[]> {
    const rows = await this.statements.usageToExport(this.name, positive(marginMs, 'marginMs'), positive(limit, 'limit'));
    return rows.map(toUsageRecord);
  }

  /**
   * The records up to `last` (`count` of them since the cursor) were delivered: the cursor moves to
   * it and the claim is renewed. False when this instance no longer holds the export, or the cursor
   * is already at or past `last` (another holder delivered it meanwhile).
   */
  advance(last: UsageRecord, count: number, ttlMs: number): Promise<boolean> {
    return this.statements.advanceUsageExport(this.name, this.holder, last.requestId, positive(count, 'count'), positive(ttlMs, 'ttlMs'));
  }

  /** Gives the claim back (at shutdown), so that another instance takes over at once. */
  async release(): Promise<void> {
    await this.statements.db
      .updateTable('usage_exports')
      .set({ holder: null, held_until: null })
      .where('name', '=', this.name)
      .where('holder', '=', this.holder)
      .execute();
  }
}

function positive(v: number, what: string): number {
  if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`${what} must be a positive whole number, got ${v}`);
  return v;
}
