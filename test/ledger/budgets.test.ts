/**
 * Key budgets on every path a hold can take, straight on the ledger: settle (held -> spent, the
 * rest returned), release and expiry (all returned), a capture after expiry (counted up to the
 * limit only), a batch of one key's holds (admitted while they fit), and the CHECK that keeps
 * spent + held within the limit whatever a statement does.
 */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Usage } from '../../src/ir/usage.js';
import { GatewayError } from '../../src/ir/errors.js';
import type { Ledger, UsageRecordInput } from '../../src/ledger/index.js';
import { isBudgetViolation } from '../../src/ledger/budgets.js';
import { dbTargets, openForSuite } from './db-targets.js';

const usage: Usage = { input: { noCache: 10, cacheRead: 0, cacheWrite: 0 }, output: { total: 20, reasoning: 0 } };
let seq = 0;
const rid = () => `req_budget_${Date.now()}_${seq++}`;

describe.each(dbTargets)('key budgets in the ledger ($name)', (target) => {
  let ledger: Ledger;
  openForSuite(target, (t) => (ledger = t.ledger));

  async function keyWith(limit: bigint) {
    const a = await ledger.createAccount('budget', 1_000_000n);
    const { record } = await ledger.createKey(a.id, { budgets: [{ period: 'day', limit }, { period: 'lifetime', limit: limit * 2n }] });
    const rec: UsageRecordInput = { keyId: record.id, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 1, status: 'ok' };
    const hold = (amount: bigint, ttlMs = 60_000) => {
      const requestId = rid();
      return ledger.placeHold({ requestId, accountId: a.id, keyId: record.id, amount, ttlMs }).then(() => requestId);
    };
    const day = async () => (await ledger.budgetStatus(record.id)).find((b) => b.period === 'day')!;
    return { accountId: a.id, keyId: record.id, rec, hold, day };
  }

  it('settle moves the captured part to spent and returns the rest; release and expiry return it all', async () => {
    const k = await keyWith(1_000n);
    const settled = await k.hold(400n);
    const released = await k.hold(300n);
    await k.hold(200n, 1); // expires: the reaper frees it below
    expect(await k.day()).toMatchObject({ spent: 0n, held: 900n, remaining: 100n });
    await expect(k.hold(101n)).rejects.toMatchObject({ kind: 'insufficient_balance', code: 'budget_exceeded' });

    await ledger.settle({ requestId: settled, charges: [{ model: 'm', usage, cost: 250n }], record: k.rec });
    expect(await k.day()).toMatchObject({ spent: 250n, held: 500n });
    expect(await ledger.release(released)).toBe(true);
    expect(await k.day()).toMatchObject({ spent: 250n, held: 200n });
    await ledger.reapExpired(new Date(Date.now() + 60_000));
    expect(await k.day()).toMatchObject({ spent: 250n, held: 0n, remaining: 750n });
    expect((await ledger.budgetStatus(k.keyId)).find((b) => b.period === 'lifetime')).toMatchObject({ spent: 250n, held: 0n, resetsAt: null });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a capture after its hold expired counts toward the budget up to its limit, no further', async () => {
    const k = await keyWith(1_000n);
    const late = await k.hold(600n, 1);
    await ledger.reapExpired(new Date(Date.now() + 60_000));
    const other = await k.hold(1_000n);
    expect(await k.day()).toMatchObject({ spent: 0n, held: 1_000n });
    // The late settle charges the account in full; the day budget is full, so it counts nothing there.
    await ledger.settle({ requestId: late, charges: [{ model: 'm', usage, cost: 600n }], record: k.rec });
    expect(await k.day()).toMatchObject({ spent: 0n, held: 1_000n });
    expect((await ledger.budgetStatus(k.keyId)).find((b) => b.period === 'lifetime')).toMatchObject({ spent: 600n, held: 1_000n });
    await ledger.settle({ requestId: other, charges: [{ model: 'm', usage, cost: 1_000n }], record: k.rec });
    expect(await k.day()).toMatchObject({ spent: 1_000n, held: 0n, remaining: 0n });
    expect(await ledger.getAccount(k.accountId)).toMatchObject({ balance: 1_000_000n - 1_600n, held: 0n });
  });

  it('holds of one key arriving together are admitted while they fit, and no further', async () => {
    const k = await keyWith(1_000n);
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => k.hold(70n)));
    const placed = results.filter((r) => r.status === 'fulfilled').length;
    expect(placed).toBe(14);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(GatewayError);
    expect(await k.day()).toMatchObject({ held: 980n, remaining: 20n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('the usage row refuses spent + held above its limit, whatever writes it', async () => {
    const k = await keyWith(1_000n);
    await k.hold(900n);
    const over = sql`UPDATE budget_usage SET held = held + 101 WHERE key_id = ${k.keyId} AND period = 'day'`.execute(ledger.db);
    await expect(over.then(() => undefined, (e: unknown) => e)).resolves.toSatisfy(isBudgetViolation);
  });
});
