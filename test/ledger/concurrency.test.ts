import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dbTargets, openForSuite } from './db-targets.js';
import type { Ledger } from '../../src/ledger/index.js';
import { GatewayError } from '../../src/ir/errors.js';

const settled = <T>(ps: Promise<T>[]) => Promise.allSettled(ps);

describe.each(dbTargets)('ledger concurrency on $name', (target) => {
  let ledger: Ledger;
  openForSuite(target, (opened) => (ledger = opened.ledger));

  it('500 concurrent holds against a balance that affords exactly K: exactly K succeed', async () => {
    const K = 37;
    const amount = 1_000_003n;
    // One nanodollar short of K+1 holds.
    const a = await ledger.createAccount('race', amount * BigInt(K) + amount - 1n);
    const results = await settled(
      Array.from({ length: 500 }, (_, i) =>
        ledger.placeHold({ requestId: `race-${a.id}-${i}`, accountId: a.id, amount, ttlMs: 60_000 }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(K);
    for (const f of failed) {
      expect(f.reason).toBeInstanceOf(GatewayError);
      expect((f.reason as GatewayError).status).toBe(402);
    }
    const acct = await ledger.getAccount(a.id);
    expect(acct).toMatchObject({ held: amount * BigInt(K), available: amount - 1n });
    const { rows } = await sql<{ n: bigint }>`SELECT count(*) AS n FROM holds WHERE account_id = ${a.id}`.execute(ledger.db);
    expect(rows[0].n).toBe(BigInt(K));
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('20 concurrent holds with one request id: one is placed, the rest are conflicts', async () => {
    const a = await ledger.createAccount('dup', 1_000_000n);
    const id = `dup-${a.id}`;
    const results = await settled(
      Array.from({ length: 20 }, () => ledger.placeHold({ requestId: id, accountId: a.id, amount: 1_000n, ttlMs: 60_000 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as GatewayError).kind).toBe('conflict');
    }
    expect(await ledger.getAccount(a.id)).toMatchObject({ held: 1_000n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('concurrent settles, releases and holds on one account stay exact', async () => {
    const a = await ledger.createAccount('mixed', 1_000_000n);
    const ids = Array.from({ length: 60 }, (_, i) => `mix-${a.id}-${i}`);
    await Promise.all(ids.map((id) => ledger.placeHold({ requestId: id, accountId: a.id, amount: 10_000n, ttlMs: 60_000 })));
    // Each hold gets a settle and a release racing each other, twice over: one wins per hold.
    const ops = ids.flatMap((id, i) => [
      ledger.settle({ requestId: id, charges: [{ model: 'm', usage: { input: { noCache: i, cacheRead: 0, cacheWrite: 0 }, output: { total: 1, reasoning: 0 } }, cost: BigInt(i * 100) }], record: { keyId: null, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 1, status: 'ok' } }),
      ledger.release(id),
      ledger.settle({ requestId: id, charges: [{ model: 'm', usage: { input: { noCache: 1, cacheRead: 0, cacheWrite: 0 }, output: { total: 1, reasoning: 0 } }, cost: 7n }], record: { keyId: null, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 1, status: 'ok' } }),
      ledger.release(id),
    ]);
    const results = await settled<unknown>(ops);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    const winners = ids.map((_, i) => {
      const [s1, r1, s2, r2] = results.slice(i * 4, i * 4 + 4).map((r) => (r as PromiseFulfilledResult<unknown>).value);
      return [(s1 as { settled: boolean }).settled, r1, (s2 as { settled: boolean }).settled, r2].filter((w) => w === true).length;
    });
    expect(winners.every((w) => w === 1)).toBe(true);
    const acct = await ledger.getAccount(a.id);
    expect(acct?.held).toBe(0n);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('reapExpired from 3 callers at once releases an expired hold exactly once', async () => {
    const a = await ledger.createAccount('reap', 1_000n);
    await ledger.placeHold({ requestId: `reap-${a.id}-old`, accountId: a.id, amount: 300n, ttlMs: 1 });
    await ledger.placeHold({ requestId: `reap-${a.id}-new`, accountId: a.id, amount: 200n, ttlMs: 3_600_000 });
    await new Promise((r) => setTimeout(r, 20));
    const later = new Date(Date.now() + 1_000);
    const counts = await Promise.all([ledger.reapExpired(later), ledger.reapExpired(later), ledger.reapExpired(later)]);
    // Other tests' holds are far from expiry; only ours is due, and exactly one caller took it.
    expect(counts.reduce((x, y) => x + y, 0)).toBe(1);
    expect(await ledger.getAccount(a.id)).toMatchObject({ held: 200n, available: 800n });
    const { rows } = await sql<{ status: string }>`SELECT status FROM holds WHERE id = ${`reap-${a.id}-old`}`.execute(ledger.db);
    expect(rows[0].status).toBe('expired');
    expect(await ledger.reapExpired(later)).toBe(0);
    // A settle arriving after the expiry still records the request (late capture, see late-capture.test.ts), once.
    const lateSettle = { requestId: `reap-${a.id}-old`, charges: [], record: { keyId: null, modelRequested: 'm', modelServed: null, attempts: [], latencyMs: 1, status: 'ok' as const } };
    expect(await ledger.settle(lateSettle)).toEqual({ captured: 0n, settled: true });
    expect(await ledger.settle(lateSettle)).toEqual({ captured: 0n, settled: false });
    expect(await ledger.getAccount(a.id)).toMatchObject({ held: 200n, available: 800n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('reapExpired with the database clock releases a hold whose short ttl passed', async () => {
    const a = await ledger.createAccount('reap-now', 100n);
    await ledger.placeHold({ requestId: `reapnow-${a.id}`, accountId: a.id, amount: 100n, ttlMs: 5 });
    await new Promise((r) => setTimeout(r, 50));
    expect(await ledger.reapExpired()).toBeGreaterThanOrEqual(1);
    expect(await ledger.getAccount(a.id)).toMatchObject({ held: 0n, available: 100n });
  });
});
