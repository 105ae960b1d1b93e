/**
 * Budgets (a key's; a signed-in user's own and their groups') on every path a hold can take, straight on the ledger: settle (held -> spent, the
 * rest returned), release and expiry (all returned), a capture after expiry (counted up to the
 * limit only), a batch of one key's holds (admitted while they fit), and the CHECK that keeps
 * spent + held within the limit whatever a statement does.
 */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Usage } from '../../src/ir/usage.js';
import { GatewayError } from '../../src/ir/errors.js';
import type { HoldBudget, Ledger, UsageRecordInput } from '../../src/ledger/index.js';
import { groupBudgetOwner, isBudgetViolation } from '../../src/ledger/budgets.js';
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
    const over = sql`UPDATE budget_usage SET held = held + 101 WHERE owner = ${k.keyId} AND period = 'day'`.execute(ledger.db);
    await expect(over.then(() => undefined, (e: unknown) => e)).resolves.toSatisfy(isBudgetViolation);
  });
});

describe.each(dbTargets)('user and group budgets in the ledger ($name)', (target) => {
  let ledger: Ledger;
  openForSuite(target, (t) => (ledger = t.ledger));

  /** Two members of one group, each with a day budget of their own, the group with a smaller one. */
  async function team(userLimit: bigint, groupLimit: bigint) {
    const a = await ledger.createAccount('team', 1_000_000n);
    const tag = `${Date.now()}_${seq++}`;
    const group = `eng-${tag}`;
    const groupBudget = { owner: groupBudgetOwner(group), period: 'day' as const, limit: groupLimit, timeZone: 'UTC' };
    const member = (name: string) => {
      const userId = `usr_${name}_${tag}`;
      const budgets: HoldBudget[] = [{ owner: userId, period: 'day', limit: userLimit, timeZone: 'UTC' }, groupBudget];
      const rec: UsageRecordInput = { keyId: null, userId, modelRequested: 'm', modelServed: 'm', attempts: [], latencyMs: 1, status: 'ok' };
      const hold = (amount: bigint, ttlMs = 60_000) => {
        const requestId = rid();
        return ledger.placeHold({ requestId, accountId: a.id, budgets, amount, ttlMs }).then(() => requestId);
      };
      const status = () => ledger.ownedBudgetStatus(budgets);
      return { userId, budgets, rec, hold, status };
    };
    return { accountId: a.id, group, alice: member('alice'), bob: member('bob') };
  }

  it('a hold must fit the user\'s own budget and each group\'s; settle, release and expiry move both', async () => {
    const t = await team(600n, 1_000n);
    const a1 = await t.alice.hold(500n);
    // Alice's own budget refuses; the group would have room.
    const own = await t.alice.hold(200n).then(() => undefined, (e: unknown) => e);
    expect(own).toMatchObject({ kind: 'insufficient_balance', code: 'budget_exceeded', details: { budget: { scope: 'user', period: 'day', limit: 600, remaining: 100 } } });
    expect((own as Error).message).toContain("this user's day budget of 600 nanodollars");
    const b1 = await t.bob.hold(400n);
    // Bob's own budget has room (200 left of 600); the group's has 100 left.
    const shared = await t.bob.hold(200n).then(() => undefined, (e: unknown) => e);
    expect(shared).toMatchObject({ code: 'budget_exceeded', details: { budget: { scope: 'group', group: t.group, limit: 1_000, held: 900, remaining: 100 } } });
    expect((shared as Error).message).toContain(`group "${t.group}"'s day budget of 1000 nanodollars`);

    await ledger.settle({ requestId: a1, charges: [{ model: 'm', usage, cost: 300n }], record: t.alice.rec });
    expect(await t.alice.status()).toMatchObject([
      { owner: t.alice.userId, spent: 300n, held: 0n, remaining: 300n },
      { owner: groupBudgetOwner(t.group), spent: 300n, held: 400n, remaining: 300n },
    ]);
    expect(await ledger.release(b1)).toBe(true);
    await t.bob.hold(250n, 1);
    await ledger.reapExpired(new Date(Date.now() + 60_000));
    expect(await t.bob.status()).toMatchObject([
      { owner: t.bob.userId, spent: 0n, held: 0n },
      { owner: groupBudgetOwner(t.group), spent: 300n, held: 0n, remaining: 700n },
    ]);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('members\' holds arriving together are admitted while the group\'s budget has room, and no further', async () => {
    const t = await team(10_000n, 1_000n);
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => (i % 2 ? t.alice : t.bob).hold(70n)));
    const placed = results.filter((r) => r.status === 'fulfilled').length;
    expect(placed).toBe(14);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'budget_exceeded', details: { budget: { scope: 'group' } } });
    const [, group] = await t.alice.status();
    expect(group).toMatchObject({ held: 980n, remaining: 20n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a key\'s hold and a user\'s are apart: one owner\'s budget never counts the other\'s holds', async () => {
    const t = await team(100n, 100n);
    const { record } = await ledger.createKey(t.accountId, { budgets: [{ period: 'day', limit: 100n }] });
    await ledger.placeHold({ requestId: rid(), accountId: t.accountId, keyId: record.id, amount: 100n, ttlMs: 60_000 });
    await t.alice.hold(100n);
    expect((await ledger.budgetStatus(record.id))[0]).toMatchObject({ owner: record.id, held: 100n, remaining: 0n });
    expect((await t.alice.status())[0]).toMatchObject({ held: 100n, remaining: 0n });
  });
});
