/**
 * Issue 4 acceptance through the real HTTP server: 500 concurrent requests against a balance that
 * affords exactly K of them; refused requests are 402 in the caller's protocol and never reach
 * the upstream.
 *
 * Why "exactly K" is exact and not a race: the test model's cache-write price equals its input
 * price and every request runs into its max_tokens ceiling, so each request costs exactly its
 * hold (input x input price + max_tokens x output price). A finished request returns nothing to
 * the balance, so the order in which requests hold, finish and settle cannot change how many fit.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { anthropicMessages } from '../../src/protocols/anthropic-messages/index.js';
import { openaiChat } from '../../src/protocols/openai-chat/index.js';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { exactCostCatalog, holdFor } from '../ledger/http-billing.js';

const MODEL = 'local-haiku';
const MAX_TOKENS = 8;
const K = 37;
const TOTAL = 500;

const chatBody = (i: number) => ({
  model: MODEL,
  max_tokens: MAX_TOKENS,
  // Same length for every i below 1000, so every request holds the same amount (checked below).
  messages: [{ role: 'user', content: `Request ${String(i).padStart(3, '0')}: write a long story about ledgers, holds and settlements.` }],
});

describe.each(dbTargets)('billing under concurrency through HTTP ($name)', (target) => {
  let gw: TestGateway;
  let fake: FakeUpstream;
  const catalog = exactCostCatalog(MODEL);

  beforeAll(async () => {
    fake = await startFakeUpstream({ scenario: { words: 50 } });
    catalog.providers.set('fake', {
      id: 'fake', type: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk-fake', headers: {},
      timeouts: { connectMs: 1_000, firstByteMs: 5_000, idleMs: 5_000, responseMs: 5_000 }, maxRetries: 0,
    });
    const base = catalog.models.get(MODEL)!;
    const deployment = { ...base.deployments[0], id: 'fake-model/0', provider: catalog.providers.get('fake')!, upstreamModel: 'gpt-fake' };
    catalog.models.set('fake-model', { ...base, id: 'fake-model', deployments: [deployment], fallbacks: [], aliases: [] });
    gw = await startTestGateway({ target, catalog, balance: 0n });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it(`${TOTAL} concurrent requests, balance for exactly ${K}: ${K} succeed, the rest get 402, the journal adds up`, async () => {
    const holds = new Set(Array.from({ length: TOTAL }, (_, i) => holdFor(catalog, openaiChat, chatBody(i)).hold));
    expect(holds.size).toBe(1);
    const [H] = holds;
    const { accountId, key } = await gw.newAccount(BigInt(K) * H + H - 1n, 'concurrency');

    const responses = await Promise.all(
      Array.from({ length: TOTAL }, async (_, i) => {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(chatBody(i)),
        });
        return { status: res.status, body: (await res.json()) as any, requestId: res.headers.get('x-request-id')! };
      }),
    );

    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    expect(ok.length).toBe(K);
    expect(refused.length).toBe(TOTAL - K);
    for (const r of ok) {
      // The premise of exactness: the answer ran into its ceiling and was billed at its hold.
      expect(r.body.choices[0].finish_reason).toBe('length');
      expect(r.body.usage.completion_tokens).toBe(MAX_TOKENS);
    }
    for (const r of refused) {
      expect(r.body.error.type).toBe('insufficient_quota');
      expect(r.body.error.code).toBe('insufficient_quota');
      expect(r.body.error.unit).toBe('nanodollars');
      expect(r.body.error.required).toBe(Number(H));
      // Whatever was available at that moment: never enough for one more hold.
      expect(BigInt(r.body.error.available)).toBeLessThan(H);
      expect(r.body.error.message).toContain(`${r.body.error.available} nanodollars is available`);
    }

    const account = (await gw.ledger.getAccount(accountId))!;
    expect(account).toMatchObject({ balance: H - 1n, held: 0n });
    const captures = (await gw.ledger.ledgerEntries(accountId, 1000)).filter((e) => e.kind === 'capture');
    expect(captures.map((e) => e.requestId).sort()).toEqual(ok.map((r) => r.requestId).sort());
    expect(captures.every((e) => e.amount === -H && e.cost === H && e.model === MODEL)).toBe(true);
    // A refused request never reached the pipeline's settlement: no hold row, no usage record.
    const holdRows = await gw.ledger.db.selectFrom('holds').select(['id', 'status']).where('account_id', '=', accountId).execute();
    expect(holdRows.length).toBe(K);
    expect(holdRows.every((h) => h.status === 'settled')).toBe(true);
    expect((await gw.ledger.usageRecords(accountId, 1000)).length).toBe(K);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('a refused request sends nothing upstream (OpenAI SDK sees 402 insufficient_quota)', async () => {
    const body = { model: 'fake-model', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hello' }] };
    const { hold } = holdFor(catalog, openaiChat, body);
    const { accountId, key } = await gw.newAccount(hold - 1n, 'poor');
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    fake.reset();
    const errors = await Promise.all(Array.from({ length: 20 }, () => client.chat.completions.create(body).then(() => undefined, (e: unknown) => e)));
    for (const e of errors) {
      expect(e).toBeInstanceOf(OpenAI.APIError);
      const err = e as InstanceType<typeof OpenAI.APIError>;
      expect(err.status).toBe(402);
      expect(err.type).toBe('insufficient_quota');
      expect(err.message).toContain(`needs ${hold} nanodollars held but ${hold - 1n} nanodollars is available`);
    }
    expect(fake.requests.length).toBe(0);
    expect(await gw.ledger.getAccount(accountId)).toMatchObject({ balance: hold - 1n, held: 0n });

    // The control: one unit more and the same request goes upstream and is billed.
    await gw.ledger.credit(accountId, 1n, 'top-up');
    const ok = await client.chat.completions.create(body);
    expect(ok.choices[0].message.content).toBeTruthy();
    expect(fake.requests.length).toBe(1);
  });

  it('messages callers get 402 billing_error saying what is available (Anthropic SDK)', async () => {
    const body = { model: MODEL, max_tokens: 1000, messages: [{ role: 'user' as const, content: 'hello' }] };
    const { hold } = holdFor(catalog, anthropicMessages, body);
    const { key } = await gw.newAccount(hold - 7n, 'poor-anthropic');
    const client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const e = await client.messages.create(body).then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    const err = e as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(402);
    expect((err.error as any).type).toBe('error');
    expect((err.error as any).error).toMatchObject({ type: 'billing_error', available: Number(hold - 7n), required: Number(hold), unit: 'nanodollars' });
    expect((err.error as any).error.message).toContain(`${hold - 7n} nanodollars is available`);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });
});
