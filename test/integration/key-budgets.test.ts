/**
 * Issue 24 through the real HTTP server: spend budgets per key (exact under concurrency, on one
 * instance and on two sharing PostgreSQL), their 402 in each protocol's shape, the calendar reset,
 * key expiry on every instance, and the spend summaries.
 *
 * Exactness rests on the premise billing-concurrency.test.ts explains: the model's cache-write price
 * equals its input price and every request runs into max_tokens, so each request costs exactly its
 * hold, and a budget for K holds and a bit admits exactly K requests, whatever the order.
 */
import OpenAI from 'openai';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../src/app/start-gateway.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { openaiChat } from '../../src/protocols/openai-chat/index.js';
import { ADMIN_KEY, dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { captureGateway, capturedLogOptions } from '../support/log-capture.js';
import { exactCostCatalog, holdFor, responseProblems, waitFor } from '../ledger/http-billing.js';

const MODEL = 'local-haiku';
const MAX_TOKENS = 8;
const K = 23;
const TOTAL = 200;
const REDIS_URL = process.env.TEST_REDIS_URL;

const chatBody = (i: number) => ({
  model: MODEL,
  max_tokens: MAX_TOKENS,
  // Same length for every i below 1000, so every request holds the same amount.
  messages: [{ role: 'user', content: `Request ${String(i).padStart(3, '0')}: tell me about budgets.` }],
});

const post = (url: string, path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

async function json(res: Response, operationId: string, status: number) {
  const body = (await res.json()) as any;
  expect({ status: res.status, body }).toMatchObject({ status });
  expect(await responseProblems(operationId, status, body)).toEqual([]);
  return body;
}

describe.each(dbTargets)('key budgets, expiry and spend ($name)', (target) => {
  let gw: TestGateway;
  /** PostgreSQL only: a second gateway on the same schema, its own ledger, cache and group commit. */
  let second: { url: string; gateway: Gateway; ledger: Ledger } | undefined;
  const catalog = exactCostCatalog(MODEL);
  const H = holdFor(catalog, openaiChat, chatBody(0)).hold;

  beforeAll(async () => {
    gw = await startTestGateway({ target, catalog, ...(REDIS_URL && { redisUrl: REDIS_URL }) });
    if (gw.db.databaseUrl) {
      const ledger = await openLedger({ databaseUrl: gw.db.databaseUrl, schema: gw.db.schema, poolSize: 20 });
      const gateway = await startGateway({ ...capturedLogOptions(), catalog, port: 0, ledger, adminKey: ADMIN_KEY, ...(REDIS_URL && { redisUrl: REDIS_URL }) });
      captureGateway(gateway, { adminKey: ADMIN_KEY }, 'key-budgets');
      second = { url: gateway.url, gateway, ledger };
    }
  });
  afterAll(async () => {
    await second?.gateway.close();
    await second?.ledger.close();
    await gw?.close();
  });

  async function newKey(body: Record<string, unknown>, accountId = gw.accountId) {
    const created = await json(await gw.admin('/admin/keys', 'POST', { account_id: accountId, ...body }), 'adminCreateKey', 201);
    return created as { id: string; key: string; budgets: unknown[]; budget_time_zone: string; expires_at: string | null };
  }

  it('budgets, time zone and expiry are set, shown, replaced and cleared through the admin API', async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const k = await newKey({ name: 'b', budgets: [{ period: 'week', limit: 5000 }, { period: 'day', limit: 1000 }], budget_time_zone: 'Europe/Paris', expires_at: expires });
    expect(k).toMatchObject({ budgets: [{ period: 'day', limit: 1000 }, { period: 'week', limit: 5000 }], budget_time_zone: 'Europe/Paris', expires_at: expires });
    const listed = await json(await gw.admin(`/admin/keys?account_id=${gw.accountId}`), 'adminListKeys', 200);
    expect(listed.data.find((x: any) => x.id === k.id)).toMatchObject({ budgets: k.budgets, budget_time_zone: 'Europe/Paris', expires_at: expires });

    const changed = await json(await gw.admin(`/admin/keys/${k.id}`, 'PATCH', { budgets: [{ period: 'lifetime', limit: 7 }] }), 'adminUpdateKey', 200);
    expect(changed).toMatchObject({ budgets: [{ period: 'lifetime', limit: 7 }], budget_time_zone: 'Europe/Paris', expires_at: expires });
    const cleared = await json(await gw.admin(`/admin/keys/${k.id}`, 'PATCH', { budgets: null, expires_at: null }), 'adminUpdateKey', 200);
    expect(cleared).toMatchObject({ budgets: [], expires_at: null, name: 'b' });

    const bad = async (body: unknown, param: string) => {
      const err = await json(await gw.admin(`/admin/keys/${k.id}`, 'PATCH', body), 'adminUpdateKey', 400);
      expect(err.error.param ?? err.error.message).toContain(param);
    };
    await bad({ budgets: [{ period: 'day', limit: 1 }, { period: 'day', limit: 2 }] }, 'budgets');
    await bad({ budget_time_zone: 'Mars/Olympus_Mons' }, 'budget_time_zone');
    await bad({ budgets: [{ period: 'fortnight', limit: 1 }] }, 'budgets');
    await bad({ budgets: [{ period: 'day', limit: 0 }] }, 'budgets');
    await bad({ expires_at: 'tomorrow' }, 'expires_at');
  });

  it(`${TOTAL} concurrent requests on one key with a day budget for ${K}: exactly ${K} pass, on every instance, and the books agree`, async () => {
    const { accountId } = await gw.newAccount(1_000_000_000_000n, 'budget-race');
    const limit = BigInt(K) * H + H - 1n;
    const k = await newKey({ budgets: [{ period: 'day', limit: Number(limit) }, { period: 'lifetime', limit: Number(limit * 10n) }] }, accountId);
    const urls = second ? [gw.url, second.url] : [gw.url];
    const responses = await Promise.all(
      Array.from({ length: TOTAL }, async (_, i) => {
        const res = await post(urls[i % urls.length], '/v1/chat/completions', k.key, chatBody(i));
        return { status: res.status, body: (await res.json()) as any };
      }),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    expect(responses.filter((r) => r.status !== 200 && r.status !== 402).map((r) => r.body.error?.message)).toEqual([]);
    expect(ok.length).toBe(K);
    expect(refused.length).toBe(TOTAL - K);
    for (const r of ok) expect(r.body.usage.completion_tokens).toBe(MAX_TOKENS);
    for (const r of refused) expect(r.body.error).toMatchObject({ code: 'budget_exceeded', type: 'insufficient_quota', required: Number(H) });

    await second?.ledger.settled();
    const usage = await gw.ledger.db.selectFrom('budget_usage').selectAll().where('owner', '=', k.id).execute();
    expect(usage.map((u) => [u.period, u.spent, u.held]).sort()).toEqual([['day', BigInt(K) * H, 0n], ['lifetime', BigInt(K) * H, 0n]]);
    for (const u of usage) expect(u.spent + u.held).toBeLessThanOrEqual(u.limit_amount);
    const pending = await gw.ledger.db.selectFrom('holds').select('id').where('account_id', '=', accountId).where('status', '=', 'pending').execute();
    expect(pending).toEqual([]);
    expect((await gw.ledger.getAccount(accountId))!.held).toBe(0n);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });

    const balance = await json(await fetch(`${urls[urls.length - 1]}/v1/balance`, { headers: { authorization: `Bearer ${k.key}` } }), 'getBalance', 200);
    expect(balance.budgets[0]).toMatchObject({ period: 'day', limit: Number(limit), spent: Number(BigInt(K) * H), held: 0, remaining: Number(H - 1n) });
    expect(balance.budgets[1]).toMatchObject({ period: 'lifetime', spent: Number(BigInt(K) * H), resets_at: null });
  });

  it('over budget is a 402 in each protocol, naming the budget and when it resets, and sends nothing upstream', async () => {
    const k = await newKey({ budgets: [{ period: 'week', limit: 5 }], budget_time_zone: 'America/New_York' });
    const chat = await post(gw.url, '/v1/chat/completions', k.key, chatBody(1));
    const chatBodyJson = await json(chat, 'createChatCompletion', 402);
    expect(chatBodyJson.error).toMatchObject({ type: 'insufficient_quota', code: 'budget_exceeded', budget: { period: 'week', limit: 5, spent: 0, held: 0, remaining: 5 } });
    const resetsAt = new Date(chatBodyJson.error.budget.resets_at);
    // Next Monday, midnight in New York: 04:00 or 05:00 UTC, 1 to 7 days ahead.
    expect(resetsAt.getUTCDay()).toBe(1);
    expect([4, 5]).toContain(resetsAt.getUTCHours());
    expect(resetsAt.getTime() - Date.now()).toBeGreaterThan(0);
    expect(resetsAt.getTime() - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    expect(chatBodyJson.error.message).toContain('week budget of 5 nanodollars');
    expect(chatBodyJson.error.message).toContain(`resets at ${resetsAt.toISOString()}`);
    expect(Number(chat.headers.get('retry-after'))).toBeGreaterThan(0);

    const messages = await post(gw.url, '/v1/messages', k.key, { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' });
    const m = await json(messages, 'createMessage', 402);
    expect(m).toMatchObject({ type: 'error', error: { type: 'billing_error', budget: { period: 'week', limit: 5 } } });
    expect(m.error.message).toContain('week budget of 5 nanodollars');

    const responses = await post(gw.url, '/v1/responses', k.key, { model: MODEL, max_output_tokens: 16, input: 'hi' });
    const r = await json(responses, 'createResponse', 402);
    expect(r.error).toMatchObject({ code: 'budget_exceeded', budget: { period: 'week', limit: 5 } });

    // What the official SDK sees.
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: k.key, maxRetries: 0 });
    const e = await client.chat.completions.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((e as InstanceType<typeof OpenAI.APIError>).code).toBe('budget_exceeded');
    // A refused request holds nothing.
    expect(await gw.ledger.db.selectFrom('budget_usage').selectAll().where('owner', '=', k.id).execute()).toEqual([]);
  });

  it('a new period starts from zero: a spent-out row of the previous day does not count', async () => {
    const tz = 'Asia/Kolkata';
    const k = await newKey({ budgets: [{ period: 'day', limit: Number(2n * H) }], budget_time_zone: tz });
    // Yesterday (in the key's time zone) spent the whole budget. SQLite keeps instants as epoch
    // milliseconds and has no time zones: Kolkata is UTC+05:30 all year, so its days are plain sums.
    const DAY = 86_400_000;
    const KOLKATA = 5.5 * 3_600_000;
    const todayStart = Math.floor((Date.now() + KOLKATA) / DAY) * DAY - KOLKATA;
    const yesterdayStart = target.name === 'sqlite' ? sql`${todayStart - DAY}` : sql`date_trunc('day', (now() - interval '1 day') AT TIME ZONE ${tz}) AT TIME ZONE ${tz}`;
    await sql`INSERT INTO budget_usage (owner, period, period_start, limit_amount, spent)
      VALUES (${k.id}, 'day', ${yesterdayStart}, ${2n * H}, ${2n * H})`.execute(gw.ledger.db);
    expect((await post(gw.url, '/v1/chat/completions', k.key, chatBody(2))).status).toBe(200);
    expect((await post(gw.url, '/v1/chat/completions', k.key, chatBody(3))).status).toBe(200);
    const third = await json(await post(gw.url, '/v1/chat/completions', k.key, chatBody(4)), 'createChatCompletion', 402);
    const { rows } = target.name === 'sqlite'
      ? { rows: [{ next: new Date(todayStart + DAY) }] }
      : await sql<{ next: Date }>`SELECT (date_trunc('day', now() AT TIME ZONE ${tz}) + interval '1 day') AT TIME ZONE ${tz} AS next`.execute(gw.ledger.db);
    expect(third.error.budget).toMatchObject({ period: 'day', remaining: 0, resets_at: rows[0].next.toISOString() });
    // The earlier requests' settles may still be on their way: what they took is spent or held.
    expect(third.error.budget.spent + third.error.budget.held).toBe(Number(2n * H));
    const balance = await json(await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${k.key}` } }), 'getBalance', 200);
    expect(balance.budgets).toEqual([{ scope: 'key', period: 'day', limit: Number(2n * H), spent: Number(2n * H), held: 0, remaining: 0, resets_at: rows[0].next.toISOString() }]);
  });

  it('an expired key is refused like a revoked one, on every instance at once', async () => {
    const revoked = await newKey({});
    await gw.admin(`/admin/keys/${revoked.id}`, 'DELETE');
    const expiring = await newKey({});
    const urls = second ? [gw.url, second.url] : [gw.url];
    // Every instance has the key verified and cached.
    for (const url of urls) expect((await post(url, '/v1/chat/completions', expiring.key, chatBody(5))).status).toBe(200);
    await json(await gw.admin(`/admin/keys/${expiring.id}`, 'PATCH', { expires_at: new Date(Date.now() - 1000).toISOString() }), 'adminUpdateKey', 200);
    for (const url of urls) {
      // Money stops at once everywhere: the hold re-checks the key in the database.
      const refused = await post(url, '/v1/chat/completions', expiring.key, chatBody(6));
      const asRevoked = await post(url, '/v1/chat/completions', revoked.key, chatBody(6));
      const [a, b] = [await json(refused, 'createChatCompletion', 401), await json(asRevoked, 'createChatCompletion', 401)];
      expect(a).toEqual(b);
    }
    // Free routes too: this instance forgot the key; the others are told through Redis, when configured.
    expect((await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${expiring.key}` } })).status).toBe(401);
    if (second && REDIS_URL) {
      await waitFor(async () => ((await fetch(`${second!.url}/v1/balance`, { headers: { authorization: `Bearer ${expiring.key}` } })).status === 401 ? true : undefined), 2_000, 'the other instance to refuse the key');
    }
  });

  it('a key expiring while cached is refused from its expiry, without any announcement', async () => {
    const k = await newKey({ expires_at: new Date(Date.now() + 1_500).toISOString() });
    const balance = () => fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${k.key}` } });
    expect((await balance()).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_600));
    expect((await balance()).status).toBe(401);
    expect((await post(gw.url, '/v1/chat/completions', k.key, chatBody(7))).status).toBe(401);
  });

  it('spend summaries group the usage by day, model, key, user and session; a key holder sees only its own', async () => {
    const { accountId, key: other } = await gw.newAccount(1_000_000_000n, 'spend');
    const mine = await newKey({ name: 'mine' }, accountId);
    const send = (key: string, model: string, user?: string, session?: string) =>
      post(gw.url, '/v1/chat/completions', key, { model, max_tokens: 8, messages: [{ role: 'user', content: 'Spend, please.' }], ...(user && { user }), ...(session && { prompt_cache_key: session }) });
    for (const [key, model, user, session] of [
      [mine.key, 'local-haiku', 'bob', 'conv-1'],
      [mine.key, 'local-haiku', 'bob', 'conv-2'],
      [mine.key, 'local-sonnet', 'alice', 'conv-1'],
      [other, 'local-sonnet', undefined, undefined],
    ] as const) expect((await send(key, model, user, session)).status).toBe(200);
    // Another account's usage, which an account-scoped summary leaves out.
    expect((await send(gw.key, 'local-haiku', 'bob')).status).toBe(200);

    const records = await gw.ledger.usageRecords(accountId, 100);
    const keyOf = new Map([[mine.id, 'mine']]);
    const expected = (by: (r: (typeof records)[number]) => string | null, only?: (r: (typeof records)[number]) => boolean) => {
      const groups = new Map<string | null, any>();
      for (const r of records.filter(only ?? (() => true))) {
        const g = groups.get(by(r)) ?? { group: by(r), requests: 0, input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost: 0 };
        g.requests++;
        g.input_tokens += Number(r.tokens.inputNoCache + r.tokens.inputCacheRead + r.tokens.inputCacheWrite);
        g.output_tokens += Number(r.tokens.output);
        g.cached_tokens += Number(r.tokens.inputCacheRead);
        g.cost += Number(r.cost);
        groups.set(by(r), g);
      }
      return [...groups.values()].sort((a, b) => b.cost - a.cost || String(a.group).localeCompare(String(b.group)));
    };
    const spend = async (query: string) => json(await gw.admin(`/admin/spend?account_id=${accountId}&${query}`), 'adminGetSpend', 200);

    const today = new Date().toISOString().slice(0, 10);
    const byDay = await spend('group_by=day');
    expect(byDay).toMatchObject({ object: 'list', group_by: 'day', data: expected(() => today) });
    expect(new Date(byDay.to).getTime() - new Date(byDay.from).getTime()).toBe(30 * 86_400_000);
    expect((await spend('group_by=model')).data).toEqual(expected((r) => r.modelServed));
    expect((await spend('group_by=user')).data).toEqual(expected((r) => r.endUser ?? null));
    expect((await spend('group_by=session')).data).toEqual(expected((r) => r.session ?? null));
    const byKey = (await spend('group_by=key')).data;
    expect(byKey).toEqual(expected((r) => r.keyId));
    expect(byKey.map((g: any) => keyOf.get(g.group) ?? 'other')).toContain('mine');
    // A range that ends before the requests sums nothing.
    expect((await spend(`to=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).data).toEqual([]);
    // Every account: the other account's request is in it too.
    const all = await json(await gw.admin('/admin/spend?group_by=user'), 'adminGetSpend', 200);
    expect(all.data.find((g: any) => g.group === 'bob').requests).toBeGreaterThan(2);

    const own = await json(await fetch(`${gw.url}/v1/spend?group_by=session`, { headers: { authorization: `Bearer ${mine.key}` } }), 'getSpend', 200);
    expect(own.data).toEqual(expected((r) => r.session ?? null, (r) => r.keyId === mine.id));
    expect(own.data.reduce((n: number, g: any) => n + g.requests, 0)).toBe(3);

    const badRange = await fetch(`${gw.url}/v1/spend?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`, { headers: { authorization: `Bearer ${mine.key}` } });
    expect((await json(badRange, 'getSpend', 400)).error.param).toBe('from');
    expect((await fetch(`${gw.url}/v1/spend?from=yesterday`, { headers: { authorization: `Bearer ${mine.key}` } })).status).toBe(400);
    expect((await fetch(`${gw.url}/v1/spend?group_by=planet`, { headers: { authorization: `Bearer ${mine.key}` } })).status).toBe(400);
  });
});
