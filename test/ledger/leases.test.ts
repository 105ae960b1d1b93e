/**
 * Balance leases on every database (ledger/leases.ts): an account busy enough gets a lease after an
 * exact hold, its holds are then served from memory (no hold row), what they capture is written in
 * batches, and every money rule holds as with exact holds: no overdraft, journal = balances, a
 * capture beyond the hold is a recorded debt, a request refused only when nothing can cover it,
 * nothing left reserved after close, and a dead instance's lease given back by the reaper.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets, type OpenedTarget } from './db-targets.js';
import { waitFor } from './http-billing.js';
import { GatewayError } from '../../src/ir/errors.js';
import { openLedger, type Charge, type HoldRequest, type Ledger, type UsageRecordInput } from '../../src/ledger/index.js';

const record: UsageRecordInput = { keyId: null, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 5, status: 'ok' };
const charge = (cost: bigint): Charge => ({ model: 'm', cost, usage: { input: { noCache: 3, cacheRead: 0, cacheWrite: 0 }, output: { total: 10, reasoning: 0 } } });
let seq = 0;
const rid = (tag: string) => `req_${tag}_${Date.now()}_${seq++}`;
const hold = (accountId: string, amount: bigint, keyId?: string): HoldRequest => ({ requestId: rid('h'), accountId, keyId, amount, ttlMs: 60_000 });

async function activeLeases(ledger: Ledger, accountId: string) {
  return ledger.db.selectFrom('leases').selectAll().where('account_id', '=', accountId).where('status', '=', 'active').execute();
}

/** Places a first (exact) hold and settles it, then waits for the lease it brings. */
async function leased(ledger: Ledger, accountId: string, amount: bigint) {
  const first = hold(accountId, amount);
  await ledger.placeHold(first);
  await ledger.settle({ requestId: first.requestId, charges: [charge(amount)], record });
  return waitFor(async () => (await activeLeases(ledger, accountId))[0], 15_000, 'a lease of the account');
}

describe.each(dbTargets)('balance leases on $name', (target) => {
  let t: OpenedTarget;
  let ledger: Ledger;
  beforeAll(async () => {
    t = await target.open();
    ledger = t.ledger;
  });
  afterAll(() => t?.cleanup());

  it('a busy account is served from a lease: no hold rows, captures written in batches, journal = balances', async () => {
    const a = await ledger.createAccount('busy', 1_000_000n);
    const lease = await leased(ledger, a.id, 1_000n);
    expect(lease.amount).toBe(20_000n); // 20 holds of 1,000, at most half of what was available
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 999_000n, held: 0n, available: 999_000n });

    const holds = Array.from({ length: 15 }, () => hold(a.id, 1_000n));
    await Promise.all(holds.map((h) => ledger.placeHold(h)));
    const rows = await ledger.db.selectFrom('holds').select('id').where('id', 'in', holds.map((h) => h.requestId)).execute();
    expect(rows).toEqual([]);
    // Running requests' holds count as held; the lease's unused part does not.
    expect(await ledger.getAccount(a.id)).toMatchObject({ held: 15_000n, available: 984_000n });

    await Promise.all(holds.map((h, i) => ledger.settle({ requestId: h.requestId, charges: [charge(BigInt(100 + i))], record })));
    const spent = holds.reduce((sum, _, i) => sum + BigInt(100 + i), 0n);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 999_000n - spent, held: 0n });
    const usage = await ledger.db.selectFrom('usage_records').select(['request_id', 'lease_id', 'cost']).where('request_id', 'in', holds.map((h) => h.requestId)).execute();
    expect(usage.length).toBe(15);
    expect(usage.every((u) => u.lease_id === lease.id)).toBe(true);
    // The captures left the lease with the balance: what the account holds is the lease alone.
    const [row] = await activeLeases(ledger, a.id);
    expect((await ledger.db.selectFrom('accounts').select('held').where('id', '=', a.id).executeTakeFirstOrThrow()).held).toBe(row.amount);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a capture beyond its hold is charged in full, as a recorded debt', async () => {
    const a = await ledger.createAccount('debt', 1_000_000n);
    await leased(ledger, a.id, 1_000n);
    const h = hold(a.id, 1_000n);
    await ledger.placeHold(h);
    await ledger.settle({ requestId: h.requestId, charges: [charge(700n), charge(800n)], record });
    const u = await ledger.db.selectFrom('usage_records').select(['cost', 'beyond_hold']).where('request_id', '=', h.requestId).executeTakeFirstOrThrow();
    expect(u).toEqual({ cost: 1_500n, beyond_hold: 500n });
    const lines = (await ledger.ledgerEntries(a.id)).filter((e) => e.requestId === h.requestId);
    expect(lines.map((l) => l.reason).sort()).toEqual(['charged beyond its hold', null]);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 1_000_000n - 1_000n - 1_500n, held: 0n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a released request frees its hold; with a record it is recorded at cost 0', async () => {
    const a = await ledger.createAccount('release', 1_000_000n);
    await leased(ledger, a.id, 1_000n);
    const [quiet, recorded] = [hold(a.id, 1_000n), hold(a.id, 1_000n)];
    await ledger.placeHold(quiet);
    await ledger.placeHold(recorded);
    expect(await ledger.release(quiet.requestId)).toBe(true);
    expect(await ledger.release(recorded.requestId, { ...record, status: 'error' })).toBe(true);
    await ledger.settled();
    const usage = await ledger.db.selectFrom('usage_records').select(['request_id', 'cost', 'status']).where('request_id', 'in', [quiet.requestId, recorded.requestId]).execute();
    expect(usage).toEqual([{ request_id: recorded.requestId, cost: 0n, status: 'error' }]);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 999_000n, held: 0n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a small balance stays with exact holds: no lease below 40 of its holds available', async () => {
    const a = await ledger.createAccount('small', 39_000n);
    const h = hold(a.id, 1_000n);
    await ledger.placeHold(h);
    await ledger.settle({ requestId: h.requestId, charges: [charge(1_000n)], record });
    await new Promise((r) => setTimeout(r, 100));
    expect(await activeLeases(ledger, a.id)).toEqual([]);
    const next = hold(a.id, 1_000n);
    await ledger.placeHold(next);
    expect(await ledger.db.selectFrom('holds').select('status').where('id', '=', next.requestId).executeTakeFirst()).toEqual({ status: 'pending' });
    await ledger.release(next.requestId);
  });

  it('a hold the balance refuses takes this instance\'s unused lease back first: refused only when nothing can cover it', async () => {
    // Funds 50 holds of 1,000: the lease reserves 20 of them after the first.
    const a = await ledger.createAccount('dry', 50_000n);
    await leased(ledger, a.id, 1_000n);
    // A hold of 30,000 fits the balance (49,000) only with the lease's 20,000 back.
    const big = hold(a.id, 30_000n);
    await ledger.placeHold(big);
    expect(await activeLeases(ledger, a.id).then((l) => l.map((r) => r.amount))).toEqual([0n]);
    await ledger.settle({ requestId: big.requestId, charges: [charge(30_000n)], record });
    // 19,000 left: 19 holds of 1,000 pass (from the lease or exact), the 20th is refused.
    const rest = Array.from({ length: 20 }, () => hold(a.id, 1_000n));
    const outcomes = await Promise.allSettled(rest.map((h) => ledger.placeHold(h)));
    expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBe(19);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused.map((o) => (o.reason as GatewayError).kind)).toEqual(['insufficient_balance']);
    await Promise.all(rest.map((h, i) => (outcomes[i].status === 'fulfilled' ? ledger.settle({ requestId: h.requestId, charges: [charge(1_000n)], record }) : undefined)));
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 0n, held: 0n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a key with budgets, or a hold carrying a user\'s budgets, never takes a lease\'s word: its holds stay exact', async () => {
    const a = await ledger.createAccount('budgeted', 1_000_000n);
    const { key, record: k } = await ledger.createKey(a.id, { budgets: [{ period: 'day', limit: 500_000n }] });
    await ledger.authenticate(key);
    await leased(ledger, a.id, 1_000n);
    const keyed = hold(a.id, 1_000n, k.id);
    const owned = { ...hold(a.id, 1_000n), budgets: [{ owner: 'usr_x', period: 'day' as const, limit: 500_000n, timeZone: 'UTC' }] };
    await ledger.placeHold(keyed);
    await ledger.placeHold(owned);
    const rows = await ledger.db.selectFrom('holds').select('id').where('id', 'in', [keyed.requestId, owned.requestId]).execute();
    expect(rows.length).toBe(2);
    await ledger.release(keyed.requestId);
    await ledger.release(owned.requestId);
  });

  it('a revoked key stops at once: its next hold goes to the database, which refuses it', async () => {
    const a = await ledger.createAccount('revoke', 1_000_000n);
    const { key, record: k } = await ledger.createKey(a.id);
    await ledger.authenticate(key);
    await leased(ledger, a.id, 1_000n);
    const before = hold(a.id, 1_000n, k.id);
    await ledger.placeHold(before);
    expect(await ledger.db.selectFrom('holds').select('id').where('id', '=', before.requestId).execute()).toEqual([]); // from the lease
    await ledger.revokeKey(k.id);
    await expect(ledger.placeHold(hold(a.id, 1_000n, k.id))).rejects.toMatchObject({ kind: 'authentication' });
    await ledger.settle({ requestId: before.requestId, charges: [charge(10n)], record });
  });

  it('a batch written twice changes nothing (a commit whose answer was lost)', async () => {
    const a = await ledger.createAccount('twice', 1_000_000n);
    const lease = await leased(ledger, a.id, 1_000n);
    const h = hold(a.id, 1_000n);
    await ledger.placeHold(h);
    await ledger.settle({ requestId: h.requestId, charges: [charge(400n)], record });
    const item = { requestId: h.requestId, charges: [charge(400n)], record, lease: { id: lease.id, accountId: a.id, held: 1_000n } };
    expect(await ledger.statements.settleLeased([item], [])).toEqual({ written: [], ended: [] });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 1_000_000n - 1_000n - 400n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a lease whose instance died is given back by the reaper at its expiry; a capture after that is a late one', async () => {
    const a = await ledger.createAccount('orphan', 1_000_000n);
    const id = `lse_orphan_${seq++}`;
    // A lease of another process (it died without returning it).
    expect(await ledger.statements.takeLease({ id, accountId: a.id, instance: 'gone/1/x', amount: 50_000n, need: 100_000n, ttlMs: 1_000 })).toBeTruthy();
    expect((await ledger.db.selectFrom('accounts').select('held').where('id', '=', a.id).executeTakeFirstOrThrow()).held).toBe(50_000n);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
    await ledger.statements.renewLease({ id, grow: 0n, need: 0n, ttlMs: 1_000, inFlight: 2, inUse: 3_000n });
    // What another instance's requests hold on its lease counts as held; the rest of it does not.
    expect(await ledger.getAccount(a.id)).toMatchObject({ held: 3_000n, available: 997_000n });
    expect(await ledger.reapExpired(new Date(Date.now() + 5_000))).toBeGreaterThanOrEqual(1);
    expect(await ledger.db.selectFrom('leases').select(['status', 'amount', 'in_flight']).where('id', '=', id).executeTakeFirstOrThrow()).toEqual({ status: 'expired', amount: 50_000n, in_flight: 2 });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 1_000_000n, held: 0n });
    // The dead instance's batch arrives after all (it was only partitioned away): a late capture.
    const item = { requestId: rid('late'), charges: [charge(2_500n)], record, lease: { id, accountId: a.id, held: 3_000n } };
    expect(await ledger.statements.settleLeased([item], [])).toEqual({ written: [item.requestId], ended: [id] });
    const u = await ledger.db.selectFrom('usage_records').select(['cost', 'beyond_hold']).where('request_id', '=', item.requestId).executeTakeFirstOrThrow();
    expect(u).toEqual({ cost: 2_500n, beyond_hold: 2_500n });
    expect((await ledger.ledgerEntries(a.id)).find((e) => e.requestId === item.requestId)?.reason).toBe('captured after its lease ended');
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 997_500n, held: 0n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('close returns every lease: after it nothing is active and nothing held', async () => {
    // A second ledger on a database that outlives it: PostgreSQL's schema, or a SQLite file.
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-leases-'));
    const reopen = target.name === 'postgres'
      ? await target.open()
      : { ledger: await openLedger({ databaseUrl: `sqlite:${join(dir, 'ledger.sqlite')}` }), schema: undefined, databaseUrl: undefined, cleanup: async () => undefined };
    try {
      const other = reopen.ledger;
      const a = await other.createAccount('closing', 1_000_000n);
      await leased(other, a.id, 1_000n);
      const h = hold(a.id, 1_000n);
      await other.placeHold(h);
      void other.settle({ requestId: h.requestId, charges: [charge(10n)], record });
      await other.close();
      const after = target.name === 'postgres'
        ? await openLedger({ databaseUrl: reopen.databaseUrl, schema: reopen.schema, leases: false })
        : await openLedger({ databaseUrl: `sqlite:${join(dir, 'ledger.sqlite')}`, leases: false });
      try {
        expect(await activeLeases(after, a.id)).toEqual([]);
        expect((await after.db.selectFrom('accounts').select(['balance', 'held']).where('id', '=', a.id).executeTakeFirstOrThrow())).toEqual({ balance: 1_000_000n - 1_000n - 10n, held: 0n });
        expect(await after.balanceCheck()).toEqual({ ok: true, problems: [] });
      } finally {
        await after.close();
      }
    } finally {
      if (target.name === 'postgres') await reopen.cleanup().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
