import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dbTargets, openForSuite } from './db-targets.js';
import type { Ledger, UsageRecordInput } from '../../src/ledger/index.js';
import type { Usage } from '../../src/ir/usage.js';
import { GatewayError } from '../../src/ir/errors.js';

const usage = (noCache: number, output: number, reasoning = 0, cacheRead = 0): Usage => ({
  input: { noCache, cacheRead, cacheWrite: 0 },
  output: { total: output, reasoning },
});
const record = (over: Partial<UsageRecordInput> = {}): UsageRecordInput => ({
  keyId: null, modelRequested: 'm-a', modelServed: 'm-a', attempts: [{ model: 'm-a', status: 200 }],
  latencyMs: 12, status: 'ok', ...over,
});
let seq = 0;
const rid = () => `req_${Date.now()}_${seq++}`;

async function rejects(p: Promise<unknown>): Promise<GatewayError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(GatewayError);
  return e as GatewayError;
}

describe.each(dbTargets)('ledger on $name', (target) => {
  let ledger: Ledger;
  openForSuite(target, (opened) => (ledger = opened.ledger));

  it('creates accounts with bigint money and journals the opening balance', async () => {
    const a = await ledger.createAccount('alice', 1_000_000n);
    expect(a).toMatchObject({ name: 'alice', balance: 1_000_000n, held: 0n, available: 1_000_000n });
    expect(a.id).toMatch(/^acct_[0-9A-Za-z]{20}$/);
    expect(a.createdAt).toBeInstanceOf(Date);
    const [j] = await ledger.ledgerEntries(a.id);
    expect(j).toMatchObject({ kind: 'credit', amount: 1_000_000n, balanceAfter: 1_000_000n });
    expect(typeof j.id).toBe('bigint');
    expect(await ledger.getAccount('acct_nope')).toBeUndefined();
    const empty = await ledger.createAccount('empty');
    expect(empty.balance).toBe(0n);
    expect(await ledger.ledgerEntries(empty.id)).toEqual([]);
  });

  it('stores keys hashed, authenticates, and refuses revoked or unknown keys', async () => {
    const a = await ledger.createAccount('keys', 0n);
    const { key, record: k } = await ledger.createKey(a.id, { name: 'ci' });
    expect(key).toMatch(/^sk-sy-[0-9A-Za-z]{43}$/);
    expect(k).toMatchObject({ accountId: a.id, name: 'ci', prefix: key.slice(0, 12), revokedAt: null });
    expect(await ledger.authenticate(key)).toEqual({ accountId: a.id, keyId: k.id });
    expect(await ledger.authenticate(key + 'x')).toBeUndefined();
    expect(await ledger.authenticate('sk-sy-unknown')).toBeUndefined();
    expect(await ledger.authenticate('')).toBeUndefined();

    // The raw key must appear in no column of any table.
    for (const table of ['accounts', 'api_keys', 'holds', 'journal', 'usage_records']) {
      const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(ledger.db);
      for (const r of rows) expect(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(key.slice(12));
    }
    expect((await ledger.listKeys(a.id)).map((r) => r.id)).toEqual([k.id]);
    expect((await ledger.listKeys()).some((r) => r.id === k.id)).toBe(true);

    const revoked = await ledger.revokeKey(k.id);
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    expect(await ledger.authenticate(key)).toBeUndefined();
    const again = await ledger.revokeKey(k.id);
    expect(again?.revokedAt?.getTime()).toBe(revoked?.revokedAt?.getTime());
    expect(await ledger.revokeKey('key_nope')).toBeUndefined();
    expect((await rejects(ledger.createKey('acct_nope'))).kind).toBe('not_found');
  });

  it('refuses a credit that would take the balance past 2^53 - 1, in the statement itself', async () => {
    const a = await ledger.createAccount('rich', BigInt(Number.MAX_SAFE_INTEGER) - 10n);
    const e = await rejects(ledger.credit(a.id, 11n, 'one too many'));
    expect([e.kind, e.param, e.message]).toEqual(['invalid_request', 'amount', `the balance would exceed ${Number.MAX_SAFE_INTEGER} nanodollars`]);
    expect((await ledger.credit(a.id, 10n, 'exactly enough')).balanceAfter).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    expect(await ledger.ledgerEntries(a.id)).toHaveLength(2);
  });

  it('credits, refuses a correction below the held amount, and keeps balance_after exact', async () => {
    const a = await ledger.createAccount('credit', 100n);
    await ledger.credit(a.id, 50n, 'top-up');
    await ledger.placeHold({ requestId: rid(), accountId: a.id, amount: 120n, ttlMs: 60_000 });
    const e = await rejects(ledger.credit(a.id, -31n, 'correction'));
    expect(e.kind).toBe('invalid_request');
    expect(e.param).toBe('amount');
    expect(e.details).toEqual({ balance: 150, held: 120, unit: 'nanodollars' });
    const ok = await ledger.credit(a.id, -30n, 'correction');
    expect(ok).toMatchObject({ kind: 'credit', amount: -30n, balanceAfter: 120n, reason: 'correction' });
    expect((await rejects(ledger.credit('acct_nope', 1n, 'x'))).kind).toBe('not_found');
    const lines = (await ledger.ledgerEntries(a.id)).reverse();
    expect(lines.map((l) => [l.amount, l.balanceAfter])).toEqual([[100n, 100n], [50n, 150n], [-30n, 120n]]);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 120n, held: 120n, available: 0n });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('refuses a hold above the available balance with a 402 that names both numbers', async () => {
    const a = await ledger.createAccount('poor', 1_000n);
    const e = await rejects(ledger.placeHold({ requestId: rid(), accountId: a.id, amount: 1_001n, ttlMs: 1000 }));
    expect(e.kind).toBe('insufficient_balance');
    expect(e.status).toBe(402);
    expect(e.message).toContain('1001');
    expect(e.message).toContain('1000');
    expect(e.details).toEqual({ available: 1000, required: 1001, unit: 'nanodollars' });
    const id = rid();
    await ledger.placeHold({ requestId: id, accountId: a.id, amount: 400n, ttlMs: 60_000 });
    const dup = await rejects(ledger.placeHold({ requestId: id, accountId: a.id, amount: 1n, ttlMs: 60_000 }));
    expect(dup.kind).toBe('conflict');
    expect(await ledger.getAccount(a.id)).toMatchObject({ held: 400n, available: 600n });
    expect((await rejects(ledger.placeHold({ requestId: rid(), accountId: a.id, amount: 0n, ttlMs: 1 }))).kind)
      .toBe('invalid_request');
  });

  it('settles an attempt whose upstream error carried a NUL character (jsonb cannot hold it)', async () => {
    const a = await ledger.createAccount('nul', 10_000n);
    const id = rid();
    await ledger.placeHold({ requestId: id, accountId: a.id, amount: 5_000n, ttlMs: 60_000 });
    const attempts = [{ model: 'm-a', outcome: 'error', reason: 'upstream said a\u0000b' }];
    expect(await ledger.settle({ requestId: id, charges: [{ model: 'm-a', usage: usage(10, 0), cost: 700n }], record: record({ attempts }) })).toEqual({ captured: 700n, settled: true });
    const [u] = await ledger.usageRecords(a.id);
    expect(u.attempts).toEqual([{ model: 'm-a', outcome: 'error', reason: 'upstream said a\uFFFDb' }]);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 9_300n, held: 0n });
  });

  it('settles: captures per charge with tokens, returns the rest, and is idempotent', async () => {
    const a = await ledger.createAccount('settle', 10_000n);
    const id = rid();
    await ledger.placeHold({ requestId: id, accountId: a.id, amount: 5_000n, ttlMs: 60_000 });
    const charges = [
      { model: 'm-a', usage: usage(10, 0), cost: 700n },
      { model: 'm-b', usage: usage(10, 20, 5, 3), cost: 1_300n },
    ];
    const r = await ledger.settle({ requestId: id, charges, record: record({ modelServed: 'm-b' }) });
    expect(r).toEqual({ captured: 2_000n, settled: true });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 8_000n, held: 0n, available: 8_000n });
    const [b, m] = await ledger.ledgerEntries(a.id, 2);
    expect(m).toMatchObject({ kind: 'capture', model: 'm-a', amount: -700n, balanceAfter: 9_300n, requestId: id, cost: 700n });
    expect(b).toMatchObject({ kind: 'capture', model: 'm-b', amount: -1_300n, balanceAfter: 8_000n, cost: 1_300n });
    expect(b.tokens).toEqual({ inputNoCache: 10n, inputCacheRead: 3n, inputCacheWrite: 0n, output: 20n, reasoning: 5n });

    const again = await ledger.settle({ requestId: id, charges, record: record() });
    expect(again).toEqual({ captured: 2_000n, settled: false });
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 8_000n, held: 0n });
    expect(await ledger.ledgerEntries(a.id)).toHaveLength(3);
    expect(await ledger.release(id)).toBe(false);

    const [u] = await ledger.usageRecords(a.id);
    expect(u).toMatchObject({ requestId: id, accountId: a.id, cost: 2_000n, modelServed: 'm-b', status: 'ok', latencyMs: 12 });
    expect(u.tokens).toEqual({ inputNoCache: 20n, inputCacheRead: 3n, inputCacheWrite: 0n, output: 20n, reasoning: 5n });
    expect(u.attempts).toEqual([{ model: 'm-a', status: 200 }]);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
    expect((await rejects(ledger.settle({ requestId: 'never-held', charges, record: record() }))).kind).toBe('not_found');
  });

  it('a cost above the hold is charged in full: a recorded debt, the balance below zero, balance_after exact', async () => {
    const a = await ledger.createAccount('debt', 1_500n);
    const id = rid();
    await ledger.placeHold({ requestId: id, accountId: a.id, amount: 1_000n, ttlMs: 60_000 });
    const r = await ledger.settle({
      requestId: id,
      charges: [
        { model: 'x', usage: usage(1, 1), cost: 600n },
        { model: 'y', usage: usage(1, 1), cost: 600n },
        { model: 'z', usage: usage(1, 1), cost: 600n },
      ],
      record: record(),
    });
    expect(r).toEqual({ captured: 1_800n, settled: true });
    const lines = (await ledger.ledgerEntries(a.id, 3)).reverse();
    expect(lines.map((l) => [l.model, l.amount, l.balanceAfter, l.cost, l.reason])).toEqual([
      ['x', -600n, 900n, 600n, null],
      ['y', -600n, 300n, 600n, 'charged beyond its hold'],
      ['z', -600n, -300n, 600n, 'charged beyond its hold'],
    ]);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: -300n, held: 0n, available: -300n });
    const [u] = await ledger.usageRecords(a.id);
    expect(u).toMatchObject({ requestId: id, cost: 1_800n, beyondHold: 800n, pricing: null });
    // Settling again answers what the first settle captured, and changes nothing.
    expect(await ledger.settle({ requestId: id, charges: [{ model: 'x', usage: usage(1, 1), cost: 1n }], record: record() })).toEqual({ captured: 1_800n, settled: false });
    // In debt, the account gets no new hold until it is topped up.
    expect((await rejects(ledger.placeHold({ requestId: rid(), accountId: a.id, amount: 1n, ttlMs: 60_000 }))).kind).toBe('insufficient_balance');
    await ledger.credit(a.id, 400n, 'top-up');
    await ledger.placeHold({ requestId: rid(), accountId: a.id, amount: 100n, ttlMs: 60_000 });
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a cost within the hold records no debt; the usage record keeps the priced lines it was given', async () => {
    const a = await ledger.createAccount('priced', 10_000n);
    const id = rid();
    await ledger.placeHold({ requestId: id, accountId: a.id, amount: 1_000n, ttlMs: 60_000 });
    const lines = [
      { kind: 'input', count: 100, rate: 3_000_000_000n },
      { kind: 'cache_write_1h', count: 10, rate: 6_000_000_000n },
      { kind: 'web_search', count: 1, rate: 10_000_000_000_000n },
    ];
    const exact = 100n * 3_000_000_000n + 10n * 6_000_000_000n + 10_000_000_000_000n;
    // Charged 900 (as if a cheaper earlier attempt had rounded up the request's sum): the record keeps both.
    const charge = {
      model: 'x', usage: usage(100, 0), cost: 900n, exact, deployment: 'x/0', priceSource: 'config',
      priced: { lines, exact, serviceTier: 'priority', above: 200_000 },
    };
    expect(await ledger.settle({ requestId: id, charges: [charge], record: record() })).toEqual({ captured: 900n, settled: true });
    const [u] = await ledger.usageRecords(a.id, 1);
    expect(u).toMatchObject({ requestId: id, cost: 900n, beyondHold: 0n });
    expect(u.pricing).toEqual([
      { model: 'x', deployment: 'x/0', priceSource: 'config', serviceTier: 'priority', longContextAbove: 200_000, lines, exact, cost: 900n },
    ]);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('settles with no charges (nothing billed) and releases with a usage record at cost 0', async () => {
    const a = await ledger.createAccount('free', 500n);
    const id1 = rid();
    await ledger.placeHold({ requestId: id1, accountId: a.id, amount: 500n, ttlMs: 60_000 });
    expect(await ledger.settle({ requestId: id1, charges: [], record: record({ status: 'error' }) }))
      .toEqual({ captured: 0n, settled: true });
    const id2 = rid();
    await ledger.placeHold({ requestId: id2, accountId: a.id, amount: 300n, ttlMs: 60_000 });
    expect(await ledger.release(id2, record({ status: 'upstream_error', attempts: [{ model: 'm-a', cost: 5n }] }))).toBe(true);
    expect(await ledger.release(id2)).toBe(false);
    expect(await ledger.getAccount(a.id)).toMatchObject({ balance: 500n, held: 0n });
    const recs = await ledger.usageRecords(a.id);
    expect(recs.map((r) => [r.requestId, r.cost, r.status]).sort()).toEqual(
      [[id1, 0n, 'error'], [id2, 0n, 'upstream_error']].sort(),
    );
    // bigints inside attempts are stored as exact strings, not lost or thrown on.
    expect(recs.find((r) => r.requestId === id2)?.attempts).toEqual([{ model: 'm-a', cost: '5' }]);
    expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('keeps the journal append-only', async () => {
    const a = await ledger.createAccount('append', 1n);
    await expect(sql`UPDATE journal SET amount = 2 WHERE account_id = ${a.id}`.execute(ledger.db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM journal WHERE account_id = ${a.id}`.execute(ledger.db)).rejects.toThrow(/append-only/);
  });

  it('balanceCheck reports a tampered projection', async () => {
    const a = await ledger.createAccount('tamper', 10n);
    await sql`UPDATE accounts SET balance = 11 WHERE id = ${a.id}`.execute(ledger.db);
    const check = await ledger.balanceCheck();
    expect(check.ok).toBe(false);
    expect(check.problems.join('\n')).toContain(a.id);
    await sql`UPDATE accounts SET balance = 10 WHERE id = ${a.id}`.execute(ledger.db);
    expect((await ledger.balanceCheck()).ok).toBe(true);
  });
});
