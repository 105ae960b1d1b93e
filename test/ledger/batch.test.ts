/**
 * The batched statements behind the group commit, called directly with several requests at once,
 * so every path of the batch SQL runs whatever the timing: mixed outcomes in one hold statement,
 * several requests of one account in one hold or settle statement (one account update; admission
 * in order while the balance covers it; a chained journal).
 */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dbTargets, openForSuite } from './db-targets.js';
import type { Charge, HoldRequest, Ledger, UsageRecordInput } from '../../src/ledger/index.js';
import { placeHolds } from '../../src/ledger/place-hold.js';
import { settleMany } from '../../src/ledger/settle.js';
import { GatewayError } from '../../src/ir/errors.js';

const record: UsageRecordInput = { keyId: null, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 5, status: 'ok' };
const charge = (cost: bigint, output = 10): Charge => ({
  model: 'm',
  cost,
  usage: { input: { noCache: 3, cacheRead: 0, cacheWrite: 0 }, output: { total: output, reasoning: 0 } },
});
let seq = 0;
const rid = (tag: string) => `${tag}-${Date.now()}-${seq++}`;

describe.each(dbTargets)('batched ledger statements on $name', (target) => {
  let ledger: Ledger;
  openForSuite(target, (opened) => (ledger = opened.ledger));

  /**
   * One hold per account covering every answer: placed with and
   * without a key, short of balance, revoked key, another account's key, unknown account, duplicate
   * and invalid. A placed hold answers the balance left available after it. `expectHeld` checks
   * that only the placed ones moved money.
   */
  async function holdCases() {
    const rich = await ledger.createAccount('rich', 10_000n);
    const keyed = await ledger.createAccount('keyed', 10_000n);
    const { record: live } = await ledger.createKey(keyed.id);
    const poor = await ledger.createAccount('poor', 50n);
    const revoking = await ledger.createAccount('revoking', 10_000n);
    const { record: revoked } = await ledger.createKey(revoking.id);
    await ledger.revokeKey(revoked.id);
    const stranger = await ledger.createAccount('stranger', 10_000n);
    const dupAccount = await ledger.createAccount('dup', 10_000n);
    const dupId = rid('dup');
    await ledger.placeHold({ requestId: dupId, accountId: dupAccount.id, amount: 10n, ttlMs: 60_000 });
    const cases: Array<[HoldRequest, string | bigint]> = [
      [{ requestId: rid('ok'), accountId: rich.id, amount: 4_000n, ttlMs: 60_000 }, 6_000n],
      [{ requestId: rid('keyed'), accountId: keyed.id, keyId: live.id, amount: 5n, ttlMs: 60_000 }, 9_995n],
      [{ requestId: rid('poor'), accountId: poor.id, amount: 51n, ttlMs: 60_000 }, 'insufficient_balance'],
      [{ requestId: rid('revoked'), accountId: revoking.id, keyId: revoked.id, amount: 1n, ttlMs: 60_000 }, 'authentication'],
      [{ requestId: rid('other-key'), accountId: stranger.id, keyId: live.id, amount: 1n, ttlMs: 60_000 }, 'authentication'],
      [{ requestId: rid('ghost'), accountId: 'acct_missing', amount: 1n, ttlMs: 60_000 }, 'not_found'],
      [{ requestId: dupId, accountId: dupAccount.id, amount: 1n, ttlMs: 60_000 }, 'conflict'],
      [{ requestId: rid('zero'), accountId: rich.id, amount: 0n, ttlMs: 60_000 }, 'invalid_request'],
    ];
    const expectHeld = async () => {
      const held = async (id: string) => (await ledger.getAccount(id))!.held;
      expect(await Promise.all([rich, keyed, poor, revoking, stranger, dupAccount].map((a) => held(a.id)))).toEqual([4_000n, 5n, 0n, 0n, 0n, 10n]);
      expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
    };
    return { cases, expectHeld };
  }

  const kindOf = (r: Error | bigint) => (r instanceof GatewayError ? r.kind : r);

  it('one hold statement: every case answered for itself', async () => {
    const { cases, expectHeld } = await holdCases();
    const results = await placeHolds(ledger.statements, cases.map(([h]) => h));
    expect(results.map(kindOf)).toEqual(cases.map(([, kind]) => kind));
    await expectHeld();
  });

  it('a hold alone in its statement (the single-row form) gets the same answers, at whatever index it stands', async () => {
    const { cases, expectHeld } = await holdCases();
    for (const [hold, kind] of cases) {
      const [alone] = await placeHolds(ledger.statements, [hold]);
      expect(kindOf(alone), hold.requestId).toBe(kind);
    }
    // Behind an invalid hold the lone valid one is at index 1: its answer lands there.
    const zero = cases.find(([, kind]) => kind === 'invalid_request')![0];
    const poor = cases.find(([, kind]) => kind === 'insufficient_balance')![0];
    expect((await placeHolds(ledger.statements, [zero, { ...poor, requestId: rid('poor') }])).map(kindOf)).toEqual(['invalid_request', 'insufficient_balance']);
    await expectHeld();
  });

  it('several holds of one account in one statement: admitted in order while they fit, each answered the balance left after it', async () => {
    const team = await ledger.createAccount('team', 1_000n);
    const other = await ledger.createAccount('other', 1_000n);
    const { record: revoked } = await ledger.createKey(team.id);
    await ledger.revokeKey(revoked.id);
    const hold = (amount: bigint, accountId = team.id, keyId?: string): HoldRequest => ({ requestId: rid('team'), accountId, keyId, amount, ttlMs: 60_000 });
    const results = await placeHolds(ledger.statements, [
      hold(900n, team.id, revoked.id), // refused for its key: takes nothing from the others' room
      hold(300n),
      hold(400n),
      hold(600n, other.id),
      hold(200n),
      hold(500n), // does not fit the 100 left
      hold(100n), // refused in the batch behind the 500, then placed on its own: the balance covers it
      hold(500n, other.id),
    ]);
    expect(results.map(kindOf)).toEqual(['authentication', 700n, 300n, 400n, 100n, 'insufficient_balance', 0n, 'insufficient_balance']);
    expect(await ledger.getAccount(team.id)).toMatchObject({ balance: 1_000n, held: 1_000n });
    expect(await ledger.getAccount(other.id)).toMatchObject({ balance: 1_000n, held: 600n });
    const { rows } = await sql<{ n: bigint }>`SELECT count(*) AS n FROM holds WHERE account_id = ${team.id}`.execute(ledger.db);
    expect(rows[0].n).toBe(4n);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  // SQLite has no per-transaction synchronous_commit: its WAL commits never wait for the disk
  // (connect.ts). Not registered there rather than skipped: CI refuses a run with skipped tests.
  if (target.name !== 'sqlite') it('both hold statements turn off the wait for the disk for their own commit only: the connection keeps synchronous commits', async () => {
    const a = await ledger.createAccount('sync', 1_000n);
    const b = await ledger.createAccount('sync-too', 1_000n);
    await ledger.db.connection().execute(async (conn) => {
      const setting = async () => (await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(conn)).rows[0].synchronous_commit;
      const before = await setting();
      expect(await placeHolds(ledger.statements.on(conn), [{ requestId: rid('sync'), accountId: a.id, amount: 10n, ttlMs: 60_000 }])).toEqual([990n]);
      expect(await setting()).toBe(before);
      const two = [a, b].map((acct) => ({ requestId: rid('sync'), accountId: acct.id, amount: 10n, ttlMs: 60_000 }));
      expect(await placeHolds(ledger.statements.on(conn), two)).toEqual([980n, 990n]);
      expect(await setting()).toBe(before);
    });
  });

  it('one settle statement for several requests of two accounts: exact balances, chained journal, a debt beyond a hold', async () => {
    const a = await ledger.createAccount('a', 1_000n);
    const b = await ledger.createAccount('b', 1_000n);
    const holds = [
      { requestId: rid('a1'), accountId: a.id, amount: 100n },
      { requestId: rid('a2'), accountId: a.id, amount: 200n },
      { requestId: rid('a3'), accountId: a.id, amount: 50n },
      { requestId: rid('b1'), accountId: b.id, amount: 300n },
    ];
    for (const h of holds) await ledger.placeHold({ ...h, ttlMs: 60_000 });
    const results = await settleMany(ledger.statements, [
      { requestId: holds[0].requestId, charges: [charge(30n), charge(20n)], record },
      { requestId: holds[1].requestId, charges: [charge(150n), charge(100n)], record }, // 250 > hold 200: 50 beyond it
      { requestId: holds[2].requestId, charges: [], record: { ...record, status: 'error' } },
      { requestId: holds[3].requestId, charges: [charge(7n)], record },
      { requestId: 'never-held', charges: [], record },
    ]);
    expect(results.map((r) => (r instanceof GatewayError ? r.kind : r))).toEqual([
      { captured: 50n, settled: true },
      { captured: 250n, settled: true },
      { captured: 0n, settled: true },
      { captured: 7n, settled: true },
      'not_found',
    ]);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 700n, held: 0n });
    expect(await ledger.getAccount(b.id)).toMatchObject({ balance: 993n, held: 0n });
    const lines = (await ledger.ledgerEntries(a.id)).filter((e) => e.kind === 'capture').sort((x, y) => Number(x.id - y.id));
    expect(lines.map((l) => [l.amount, l.balanceAfter, l.reason])).toEqual([
      [-30n, 970n, null],
      [-20n, 950n, null],
      [-150n, 800n, null],
      [-100n, 700n, 'charged beyond its hold'],
    ]);
    const { rows } = await sql<{ n: bigint }>`SELECT count(*) AS n FROM usage_records WHERE account_id IN (${a.id}, ${b.id})`.execute(ledger.db);
    expect(rows[0].n).toBe(4n);
    // Settling again answers what the first settle captured, and changes nothing.
    const again = await settleMany(ledger.statements, [{ requestId: holds[1].requestId, charges: [charge(1n)], record }]);
    expect(again).toEqual([{ captured: 250n, settled: false }]);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('through the group commit, 200 concurrent holds and settles over 5 accounts share statements and stay exact', async () => {
    const accounts = await Promise.all([0, 1, 2, 3, 4].map((i) => ledger.createAccount(`gc-${i}`, 1_000_000n)));
    const ids = Array.from({ length: 200 }, (_, i) => ({ requestId: rid(`gc${i}`), accountId: accounts[i % 5].id }));
    await Promise.all(ids.map((h) => ledger.placeHold({ ...h, amount: 1_000n, ttlMs: 60_000 })));
    const results = await Promise.all(ids.map((h, i) => ledger.settle({ requestId: h.requestId, charges: [charge(BigInt(i % 7) * 100n)], record })));
    expect(results.every((r) => r.settled)).toBe(true);
    const spent = ids.reduce((sum, _, i) => sum + Math.min(1_000, (i % 7) * 100), 0);
    const balances = await Promise.all(accounts.map((a) => ledger.getAccount(a.id)));
    expect(balances.reduce((sum, a) => sum + a!.balance, 0n)).toBe(5_000_000n - BigInt(spent));
    expect(balances.every((a) => a!.held === 0n)).toBe(true);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });
});
