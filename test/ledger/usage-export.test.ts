/**
 * The usage export's cursor on every database (ledger/usage-export.ts): records are read after
 * the cursor once older than the margin, in (created_at, request_id) order; one instance holds the
 * export at a time, another takes over when the claim is given back or lapses; the cursor moves
 * only forward and only for its holder. On PostgreSQL, a record whose statement commits after a
 * later-stamped one is not passed over while the margin covers the statement.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Usage } from '../../src/ir/usage.js';
import { UsageExportCursor, type Ledger, type UsageRecordInput } from '../../src/ledger/index.js';
import { dbTargets, openForSuite, pgTarget, type OpenedTarget } from './db-targets.js';

const usage: Usage = { input: { noCache: 10, cacheRead: 0, cacheWrite: 0 }, output: { total: 5, reasoning: 0 } };
const record: UsageRecordInput = { keyId: null, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 5, status: 'ok' };
let seq = 0;
const rid = () => `req_export_${Date.now()}_${seq++}`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function settled(ledger: Ledger, accountId: string): Promise<string> {
  const requestId = rid();
  await ledger.placeHold({ requestId, accountId, amount: 1_000n, ttlMs: 60_000 });
  await ledger.settle({ requestId, charges: [{ model: 'm', usage, cost: 100n }], record });
  return requestId;
}

describe.each(dbTargets)('usage export cursor ($name)', (target) => {
  let ledger: Ledger;
  openForSuite(target, (t) => (ledger = t.ledger));

  it('reads after the cursor once past the margin, in order; one holder at a time; the cursor only moves forward', async () => {
    const one = new UsageExportCursor(ledger.statements, 'test', 'one');
    const two = new UsageExportCursor(ledger.statements, 'test', 'two');
    expect(await one.claim(60_000)).toBe(true);
    expect(await two.claim(60_000)).toBe(false);
    expect(await one.claim(60_000)).toBe(true);

    const account = await ledger.createAccount('export', 1_000_000n);
    const ids = [await settled(ledger, account.id), await settled(ledger, account.id), await settled(ledger, account.id)];
    // Younger than the margin: not read yet.
    expect(await one.pending(60_000, 100)).toEqual([]);
    await pause(30);
    const { rows: ordered } = await sql<{ request_id: string }>`SELECT request_id FROM usage_records ORDER BY created_at, request_id`.execute(ledger.db);
    const all = await one.pending(10, 100);
    expect(all.map((r) => r.requestId)).toEqual(ordered.map((r) => r.request_id));
    expect(all.map((r) => r.requestId)).toEqual(ids);
    expect(all[0]).toMatchObject({ accountId: account.id, cost: 100n, tokens: { inputNoCache: 10n, output: 5n }, status: 'ok' });

    const firstTwo = await one.pending(10, 2);
    expect(firstTwo.map((r) => r.requestId)).toEqual(ids.slice(0, 2));
    expect(await one.advance(firstTwo[1], 2, 60_000)).toBe(true);
    expect((await one.pending(10, 100)).map((r) => r.requestId)).toEqual([ids[2]]);
    // Only the holder moves the cursor, and only forward.
    expect(await two.advance(all[2], 1, 60_000)).toBe(false);
    expect(await one.advance(all[0], 1, 60_000)).toBe(false);
    expect((await one.pending(10, 100)).map((r) => r.requestId)).toEqual([ids[2]]);

    // Given back: another instance takes over where the cursor is.
    await one.release();
    expect(await two.claim(60_000)).toBe(true);
    expect(await one.claim(60_000)).toBe(false);
    const rest = await two.pending(10, 100);
    expect(rest.map((r) => r.requestId)).toEqual([ids[2]]);
    expect(await two.advance(rest[0], 1, 60_000)).toBe(true);
    expect(await two.pending(10, 100)).toEqual([]);

    // A claim that is not renewed lapses, and its holder can no longer move the cursor.
    expect(await two.claim(1)).toBe(true);
    await pause(20);
    expect(await one.claim(60_000)).toBe(true);
    const later = await settled(ledger, account.id);
    await pause(30);
    const [next] = await one.pending(10, 100);
    expect(next.requestId).toBe(later);
    expect(await two.advance(next, 1, 60_000)).toBe(false);
    expect(await one.advance(next, 1, 60_000)).toBe(true);

    const { rows: [row] } = await sql<{ delivered: bigint; after_request_id: string; holder: string }>`
      SELECT delivered, after_request_id, holder FROM usage_exports WHERE name = 'test'`.execute(ledger.db);
    expect(row).toMatchObject({ delivered: 4n, after_request_id: later, holder: 'one' });
  });

  it('a new export starts at the ledger\'s first record; exports keep their own cursors', async () => {
    const fresh = new UsageExportCursor(ledger.statements, 'another', 'one');
    expect(await fresh.claim(60_000)).toBe(true);
    await pause(30);
    const { rows } = await sql<{ n: bigint | number }>`SELECT count(*) AS n FROM usage_records`.execute(ledger.db);
    expect((await fresh.pending(10, 1_000)).length).toBe(Number(rows[0].n));
  });
});

if (pgTarget) {
  describe('usage export cursor and commit order (postgres)', () => {
    let opened: OpenedTarget;
    openForSuite(pgTarget!, (t) => (opened = t));

    /**
     * A statement stamps its record with its start (now()), so a record stamped earlier can commit
     * after one stamped later. A read with a margin shorter than that statement passes over it (the
     * rule's failure, shown with a margin of 1 ms); with the margin longer than the statement, the
     * later record is not read before the earlier one is visible.
     */
    it('a record committed after a later-stamped one is read before it, while the margin covers the statement', async () => {
      const ledger = opened.ledger;
      const account = await ledger.createAccount('commit-order', 1_000_000n);
      // Its own account: the open insert's reference to it would hold up the settle's row lock.
      const other = await ledger.createAccount('commit-order-open', 0n);
      const reader = new UsageExportCursor(ledger.statements, 'commit-order', 'reader');
      expect(await reader.claim(60_000)).toBe(true);
      // Past every record so far, so that the reads below see only this test's two.
      await pause(20);
      for (let batch = await reader.pending(1, 1_000); batch.length > 0; batch = await reader.pending(1, 1_000)) {
        expect(await reader.advance(batch.at(-1)!, batch.length, 60_000)).toBe(true);
      }

      const slow = new pg.Client({ connectionString: opened.databaseUrl, options: `-c search_path=${opened.schema}` });
      await slow.connect();
      try {
        const early = rid();
        await slow.query('BEGIN');
        await slow.query(`INSERT INTO usage_records (request_id, account_id, model_requested, cost, latency_ms, status) VALUES ($1, $2, 'm', 0, 1, 'ok')`, [early, other.id]);
        await pause(50);
        const late = await settled(ledger, account.id);
        await pause(200);
        // The earlier-stamped record is not committed yet: a 1 ms margin reads past it.
        expect((await reader.pending(1, 100)).map((r) => r.requestId)).toEqual([late]);
        // A margin longer than the open statement reads neither yet.
        expect(await reader.pending(2_000, 100)).toEqual([]);
        await slow.query('COMMIT');
        await pause(2_100);
        expect((await reader.pending(2_000, 100)).map((r) => r.requestId)).toEqual([early, late]);
      } finally {
        await slow.end();
      }
    });
  });
}
