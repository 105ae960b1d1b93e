/**
 * A settle that arrives after the reaper expired its hold (the database was away for longer than
 * the hold's TTL) still captures the usage: the request is billed, the balance may go below zero
 * (recorded as such in the journal), and the account gets no new hold until it is topped up.
 */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Usage } from '../../src/ir/usage.js';
import { GatewayError } from '../../src/ir/errors.js';
import type { Ledger, UsageRecordInput } from '../../src/ledger/index.js';
import { dbTargets, openForSuite } from './db-targets.js';

const usage = (noCache: number, output: number): Usage => ({ input: { noCache, cacheRead: 0, cacheWrite: 0 }, output: { total: output, reasoning: 0 } });
const record: UsageRecordInput = { keyId: null, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 5, status: 'ok' };
let seq = 0;
const rid = () => `req_late_${Date.now()}_${seq++}`;

describe.each(dbTargets)('late capture ($name)', (target) => {
  let ledger: Ledger;
  openForSuite(target, (t) => (ledger = t.ledger));

  it('captures an expired hold, may take the balance below zero, and refuses holds until topped up', async () => {
    const a = await ledger.createAccount('late', 1_000n);
    const late = rid();
    await ledger.placeHold({ requestId: late, accountId: a.id, amount: 600n, ttlMs: 1 });
    // The reaper of an instance that did not see the settle (the database was away) expires it.
    expect(await ledger.reapExpired(new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(1);
    // Meanwhile the freed balance is held in full by another request.
    const other = rid();
    await ledger.placeHold({ requestId: other, accountId: a.id, amount: 1_000n, ttlMs: 60_000 });

    // The late settle arrives: the usage is captured (at most the hold), though no hold covers it now.
    expect(await ledger.settle({ requestId: late, charges: [{ model: 'm', usage: usage(10, 20), cost: 500n }], record })).toEqual({ captured: 500n, settled: true });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 500n, held: 1_000n });
    const [capture] = (await ledger.ledgerEntries(a.id)).filter((e) => e.requestId === late);
    expect(capture).toMatchObject({ amount: -500n, balanceAfter: 500n, reason: 'captured after its hold expired' });
    // No hold covered any of it: the usage record says so.
    expect((await ledger.usageRecords(a.id)).find((u) => u.requestId === late)).toMatchObject({ cost: 500n, beyondHold: 500n });

    // The other request uses all it held: the balance goes below zero, recorded as such.
    expect(await ledger.settle({ requestId: other, charges: [{ model: 'm', usage: usage(10, 90), cost: 1_000n }], record })).toEqual({ captured: 1_000n, settled: true });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: -500n, held: 0n });
    const refused = await ledger.placeHold({ requestId: rid(), accountId: a.id, amount: 1n, ttlMs: 60_000 }).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).kind).toBe('insufficient_balance');

    await ledger.credit(a.id, 600n, 'top-up');
    await ledger.placeHold({ requestId: rid(), accountId: a.id, amount: 100n, ttlMs: 60_000 });
    const usageRows = await sql<{ n: number }>`SELECT count(*) AS n FROM usage_records WHERE request_id IN (${late}, ${other})`.execute(ledger.db);
    expect(Number(usageRows.rows[0].n)).toBe(2);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a cost above a live hold is charged in full like a late capture: the key budget counts it up to its limit, balances stay exact', async () => {
    const a = await ledger.createAccount('beyond', 1_000n);
    const { record: key } = await ledger.createKey(a.id, { budgets: [{ period: 'day', limit: 700n }] });
    const id = rid();
    await ledger.placeHold({ requestId: id, accountId: a.id, keyId: key.id, amount: 600n, ttlMs: 60_000 });
    const charged = await ledger.settle({ requestId: id, charges: [{ model: 'm', usage: usage(10, 20), cost: 1_250n }], record: { ...record, keyId: key.id } });
    expect(charged).toEqual({ captured: 1_250n, settled: true });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: -250n, held: 0n });
    const [line] = (await ledger.ledgerEntries(a.id)).filter((e) => e.requestId === id);
    expect(line).toMatchObject({ amount: -1_250n, balanceAfter: -250n, cost: 1_250n, reason: 'charged beyond its hold' });
    const [u] = await ledger.usageRecords(a.id);
    expect(u).toMatchObject({ requestId: id, cost: 1_250n, beyondHold: 650n });
    expect((await ledger.budgetStatus(key.id))[0]).toMatchObject({ spent: 700n, held: 0n, remaining: 0n });
    const { rows: [hold] } = await sql<{ amount: bigint; captured: bigint }>`SELECT amount, captured FROM holds WHERE id = ${id}`.execute(ledger.db);
    expect([BigInt(hold.amount), BigInt(hold.captured)]).toEqual([600n, 1_250n]);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a repeated late settle changes nothing', async () => {
    const a = await ledger.createAccount('late-twice', 1_000n);
    const id = rid();
    await ledger.placeHold({ requestId: id, accountId: a.id, amount: 300n, ttlMs: 1 });
    await ledger.reapExpired(new Date(Date.now() + 60_000));
    const s = { requestId: id, charges: [{ model: 'm', usage: usage(1, 1), cost: 200n }], record };
    expect(await ledger.settle(s)).toEqual({ captured: 200n, settled: true });
    expect(await ledger.settle(s)).toEqual({ captured: 200n, settled: false });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 800n, held: 0n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });
});
