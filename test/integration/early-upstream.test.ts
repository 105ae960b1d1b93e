/**
 * The upstream call started while the hold commits (HoldForecast): only for an account this
 * instance has seen afford its holds; never a byte to the client before the hold is placed; a hold
 * refused after the call started cancels the call, answers the refusal in the client's protocol and
 * charges nothing. The hold is held back by locking the account's row in a transaction of the test.
 * Balance leases are off here: a hold served from a lease waits for no database, so there is no
 * commit for a call to overlap.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql, type Transaction } from 'kysely';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { dbTargets, startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../ledger/http-billing.js';
import { credit, getAccount } from '../../src/ledger/accounts.js';
import type { Database } from '../../src/ledger/schema.js';
import { bodyProblems, loadSpec, post, sampleBody, type Answer } from './cross-support.js';

describe.each(dbTargets)('upstream call started while the hold commits ($name)', (target) => {
  let started: FakeGateway | undefined;
  let fake: FakeUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    await loadSpec();
    started = await startFakeGateway((f) => ({ target, catalog: fakeCatalog(f), exactHolds: true }));
    ({ fake, gw } = started);
  });
  beforeEach(() => {
    fake.reset();
    fake.setScenario(undefined);
  });
  afterAll(() => started?.close());

  const chat = (key: string, stream = false) => post(gw.url, key, 'chat', sampleBody('chat', 'up-openai', stream));

  /**
   * Runs `during` while the account's row is locked by a transaction (handed to `during`), so its
   * next hold cannot commit before. On SQLite the transaction itself is the lock: it takes the
   * database's write lock at BEGIN.
   */
  async function withHoldBlocked<T>(accountId: string, during: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return gw.ledger.db.transaction().execute(async (trx) => {
      if (target.name === 'sqlite') await sql`SELECT id FROM accounts WHERE id = ${accountId}`.execute(trx);
      else await sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`.execute(trx);
      return during(trx);
    });
  }

  /** Whether `promise` is still pending after `ms` (it keeps running either way). */
  async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
    let done = false;
    void promise.then(() => (done = true), () => (done = true));
    await new Promise((r) => setTimeout(r, ms));
    return !done;
  }

  /**
   * A chat request sent while the account's hold is held back, expected to wait for the hold: it
   * has no answer and the upstream has still seen only `upstreamSoFar` calls 300 ms later.
   */
  async function chatWaitingForHold(accountId: string, key: string, upstreamSoFar: number): Promise<Answer> {
    let answer!: Promise<Answer>;
    await withHoldBlocked(accountId, async () => {
      answer = chat(key);
      expect(await pendingAfter(answer, 300)).toBe(true);
      expect(fake.requests).toHaveLength(upstreamSoFar);
    });
    return answer;
  }

  /** The gateway's count of upstream calls started early, by the hold's answer. */
  async function earlyCalls(): Promise<{ placed: number; refused: number }> {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const count = (hold: string) => Number(new RegExp(`^switchyard_early_upstream_calls_total\\{hold="${hold}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return { placed: count('placed'), refused: count('refused') };
  }

  it('an account with no hold answered yet waits for its hold; afterwards its call starts while the hold commits, and the client sees nothing before', async () => {
    const { accountId, key } = await gw.newAccount();
    // The key is verified (and cached) by a free request; no hold has been answered for the account.
    expect((await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    const before = await earlyCalls();
    expect((await chatWaitingForHold(accountId, key, 0)).status).toBe(200);
    expect(fake.requests).toHaveLength(1);

    // Its hold was answered: the next request's upstream call goes out before its hold commits.
    // Streamed, so the response headers would be the first byte: none arrive until the hold is placed.
    let second!: Promise<Response>;
    await withHoldBlocked(accountId, async () => {
      second = fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(sampleBody('chat', 'up-openai', true)),
      });
      await waitFor(async () => fake.requests[1], 15_000, 'the early upstream call');
      await fake.waitClosed(1); // the upstream has answered in full
      expect(await pendingAfter(second, 100)).toBe(true);
    });
    const res = await second;
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('[DONE]');
    expect(fake.requests).toHaveLength(2);
    expect(await earlyCalls()).toEqual({ placed: before.placed + 1, refused: before.refused });
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a client gone while its hold commits: the early call is closed, the hold is settled as cancelled, and no hold is left', async () => {
    const { accountId, key } = await gw.newAccount();
    expect((await chat(key)).status).toBe(200);
    fake.setScenario({ words: 20, chunkDelayMs: 500 });
    const client = new AbortController();
    await withHoldBlocked(accountId, async () => {
      const gone = fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(sampleBody('chat', 'up-openai', false)),
        signal: client.signal,
      });
      gone.catch(() => undefined);
      await waitFor(async () => fake.requests[1], 15_000, 'the early upstream call');
      client.abort();
      await fake.waitClosed(1);
      expect(fake.requests[1].aborted).toBe(true);
    });
    const records = await waitFor(async () => {
      const all = await gw.ledger.usageRecords(accountId);
      return all.length === 2 ? all : undefined;
    }, 10_000, 'the usage record of the cancelled request');
    expect(records.map((r) => r.status).sort()).toEqual(['cancelled', 'ok']);
    expect((await gw.ledger.getAccount(accountId))!.held).toBe(0n);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a hold refused after the call started: the call is cancelled, the client gets the 402, nothing is charged, and the next call waits again', async () => {
    const { accountId, key } = await gw.newAccount();
    expect((await chat(key)).status).toBe(200);
    await gw.ledger.settled();
    fake.setScenario({ words: 40, chunkDelayMs: 500 }); // a 20 s answer: still running when the hold is refused
    const before = await earlyCalls();

    // The money is spent behind this instance's back (another instance, an operator's correction)
    // by a transaction that has the account's row locked when the hold arrives: the hold waits for
    // it, then finds the balance gone.
    let refused!: Promise<Answer>;
    await withHoldBlocked(accountId, async (trx) => {
      refused = chat(key);
      await waitFor(async () => fake.requests[1], 15_000, 'the early upstream call');
      const { balance } = (await getAccount(trx, accountId))!;
      await credit(gw.ledger.statements.on(trx), accountId, 1n - balance, 'spent elsewhere');
    });
    const answer = await refused;
    expect(answer.status).toBe(402);
    expect(bodyProblems('chat', 402, answer.json)).toEqual([]);
    const closedAt = await fake.waitClosed(1);
    expect(fake.requests[1].aborted).toBe(true);
    // Cut well before the answer's 20 s (with room for a loaded machine).
    expect(closedAt - fake.requests[1].receivedAt).toBeLessThan(10_000);
    expect(await earlyCalls()).toEqual({ placed: before.placed, refused: before.refused + 1 });

    const account = (await gw.ledger.getAccount(accountId))!;
    expect({ balance: account.balance, held: account.held }).toEqual({ balance: 1n, held: 0n });
    const requestId = answer.headers.get('x-request-id')!;
    expect((await gw.ledger.usageRecords(accountId)).map((r) => r.requestId)).not.toContain(requestId);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });

    // Refused once, the account is no longer forecast to pass: its next call waits for the hold,
    // which is refused at once (nothing is left to lock for), and no upstream call is started.
    expect((await chat(key)).status).toBe(402);
    expect(await earlyCalls()).toEqual({ placed: before.placed, refused: before.refused + 1 });
    expect(fake.requests).toHaveLength(2);
  }, 60_000);
});
