/**
 * The money APIs through HTTP: GET /v1/balance with either credential header, and the admin
 * account, credits, ledger and usage endpoints. Every body is checked against the published
 * document, including fields the handler sends that the schema does not declare.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { responseProblems } from '../ledger/http-billing.js';

describe.each(dbTargets)('balance and admin money APIs ($name)', (target) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ target });
  });
  afterAll(async () => gw?.close());

  const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${gw.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${gw.adminKey}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
  async function checked(res: Response, operationId: string, status = 200) {
    const body = (await res.json()) as any;
    expect({ status: res.status, body }).toMatchObject({ status });
    expect(await responseProblems(operationId, status, body)).toEqual([]);
    return body;
  }

  it('GET /v1/balance answers the same with Authorization: Bearer and with x-api-key', async () => {
    const { accountId, key } = await gw.newAccount(5_000n, 'balance');
    const bearer = await checked(await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }), 'getBalance');
    const xApiKey = await checked(await fetch(`${gw.url}/v1/balance`, { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } }), 'getBalance');
    expect(bearer).toEqual({ account_id: accountId, balance: 5000, held: 0, available: 5000, unit: 'nanodollars', budgets: [] });
    expect(xApiKey).toEqual(bearer);
    expect((await fetch(`${gw.url}/v1/balance`)).status).toBe(401);
  });

  it('credits top up and correct, journaled with their reason; bad credits are refused', async () => {
    const { accountId } = await gw.newAccount(1_000n, 'credits');
    const top = await checked(await admin(`/admin/accounts/${accountId}/credits`, { method: 'POST', body: { amount: 2_500, reason: 'invoice 42' } }), 'adminAddCredits');
    expect(top.entry).toMatchObject({ kind: 'credit', amount: 2500, balance_after: 3500, reason: 'invoice 42', request_id: null, cost: null });
    expect(top.account).toMatchObject({ id: accountId, balance: 3500, held: 0, available: 3500, unit: 'nanodollars' });
    const fix = await checked(await admin(`/admin/accounts/${accountId}/credits`, { method: 'POST', body: { amount: -500, reason: 'double-counted' } }), 'adminAddCredits');
    expect(fix.account.balance).toBe(3000);

    expect((await admin(`/admin/accounts/${accountId}/credits`, { method: 'POST', body: { amount: 0, reason: 'x' } })).status).toBe(400);
    expect((await admin(`/admin/accounts/${accountId}/credits`, { method: 'POST', body: { amount: -3001, reason: 'too much' } })).status).toBe(400);
    expect((await admin(`/admin/accounts/${accountId}/credits`, { method: 'POST', body: { amount: 5 } })).status).toBe(400);
    expect((await admin('/admin/accounts/acct_nope/credits', { method: 'POST', body: { amount: 5, reason: 'x' } })).status).toBe(404);
    const noAuth = await fetch(`${gw.url}/admin/accounts/${accountId}/credits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 5, reason: 'x' }) });
    expect(noAuth.status).toBe(401);

    const account = await checked(await admin(`/admin/accounts/${accountId}`), 'adminGetAccount');
    expect(account).toMatchObject({ id: accountId, name: 'credits', balance: 3000, held: 0, available: 3000, unit: 'nanodollars' });
    expect((await admin('/admin/accounts/acct_nope')).status).toBe(404);
    const ledger = await checked(await admin(`/admin/accounts/${accountId}/ledger`), 'adminGetLedger');
    expect(ledger.data.map((e: any) => [e.amount, e.balance_after, e.reason])).toEqual([
      [-500, 3000, 'double-counted'],
      [2500, 3500, 'invoice 42'],
      [1000, 1000, 'initial balance'],
    ]);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('ledger and usage show each request with model, tokens, cost, attempts, latency and status', async () => {
    const { accountId, key } = await gw.newAccount(1_000_000_000n, 'usage');
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-sonnet', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('request-id');
    const msg = (await res.json()) as any;

    const ledger = await checked(await admin(`/admin/accounts/${accountId}/ledger?limit=1`), 'adminGetLedger');
    expect(ledger.data).toHaveLength(1);
    const [capture] = ledger.data;
    expect(capture).toMatchObject({ kind: 'capture', request_id: requestId, model: 'local-sonnet', input_tokens: msg.usage.input_tokens, output_tokens: msg.usage.output_tokens });
    expect(capture.cost).toBe(msg.usage.input_tokens * 3000 + msg.usage.output_tokens * 15000);
    expect(capture.amount).toBe(-capture.cost);

    const usage = await checked(await admin(`/admin/accounts/${accountId}/usage`), 'adminGetUsage');
    expect(usage.data).toHaveLength(1);
    expect(usage.data[0]).toMatchObject({
      request_id: requestId, account_id: accountId, model_requested: 'local-sonnet', model_served: 'local-sonnet',
      attempts: [{ model: 'local-sonnet', outcome: 'ok' }], input_tokens: msg.usage.input_tokens, output_tokens: msg.usage.output_tokens,
      cache_read_tokens: 0, cache_write_tokens: 0, cost: capture.cost, unit: 'nanodollars', status: 'ok',
    });
    expect(usage.data[0].latency_ms).toBeGreaterThanOrEqual(0);
    const balance = await checked(await fetch(`${gw.url}/v1/balance`, { headers: { 'x-api-key': key } }), 'getBalance');
    expect(balance).toMatchObject({ balance: 1_000_000_000 - capture.cost, held: 0 });
    expect((await admin(`/admin/accounts/${accountId}/usage?limit=0`)).status).toBe(400);
  });

  it('accounts are listed newest first, a page at a time', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await checked(await admin('/admin/accounts', { method: 'POST', body: { name: `listed ${i}` } }), 'adminCreateAccount', 201)).id);
    const whole = await checked(await admin('/admin/accounts?limit=1000'), 'adminListAccounts');
    expect(whole.has_more).toBe(false);
    const paged: string[] = [];
    for (let path = '/admin/accounts?limit=2'; ; ) {
      const page = await checked(await admin(path), 'adminListAccounts');
      paged.push(...page.data.map((a: any) => a.id));
      if (!page.has_more) break;
      path = `/admin/accounts?limit=2&before_id=${page.last_id}`;
    }
    expect(paged).toEqual(whole.data.map((a: any) => a.id));
    expect(paged).toEqual(expect.arrayContaining(made));
    // The newest account comes first.
    expect(paged[0]).toBe(made[2]);
    expect((await checked(await admin('/admin/accounts?before_id=acct_nope'), 'adminListAccounts', 400)).error.param).toBe('before_id');
  });

  it('ledger and usage page through the whole history with before_id, newest first', async () => {
    const { accountId, key } = await gw.newAccount(1_000_000_000n, 'pages');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: `hi ${i}` }] }),
      });
      expect(res.status).toBe(200);
      ids.push(res.headers.get('x-request-id')!);
    }
    async function all(kind: 'ledger' | 'usage', idOf: (row: any) => unknown) {
      const seen: unknown[] = [];
      let path = `/admin/accounts/${accountId}/${kind}?limit=2`;
      for (;;) {
        const page = await checked(await admin(path), kind === 'ledger' ? 'adminGetLedger' : 'adminGetUsage');
        expect(page.data.length).toBeLessThanOrEqual(2);
        seen.push(...page.data.map(idOf));
        if (page.data.length) expect([page.first_id, page.last_id]).toEqual([idOf(page.data[0]), idOf(page.data.at(-1))]);
        if (!page.has_more) return seen;
        path = `/admin/accounts/${accountId}/${kind}?limit=2&before_id=${encodeURIComponent(page.last_id)}`;
      }
    }
    // Five captures and the initial credit: three pages of the ledger, ids strictly decreasing.
    const journal = (await all('ledger', (e) => e.id)) as number[];
    expect(journal).toHaveLength(6);
    expect([...journal].sort((a, b) => b - a)).toEqual(journal);
    // Every record once, in the order of the whole list (records settled together share a time).
    const whole = await checked(await admin(`/admin/accounts/${accountId}/usage?limit=1000`), 'adminGetUsage');
    const paged = await all('usage', (r) => r.request_id);
    expect(paged).toEqual(whole.data.map((r: any) => r.request_id));
    expect([...paged].sort()).toEqual([...ids].sort());
    // An empty last page, and cursors that name nothing of this account.
    const end = await checked(await admin(`/admin/accounts/${accountId}/ledger?before_id=${journal.at(-1)}`), 'adminGetLedger');
    expect(end).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    const unknown = await checked(await admin(`/admin/accounts/${accountId}/usage?before_id=req_nope`), 'adminGetUsage', 400);
    expect(unknown.error.param).toBe('before_id');
    for (const bad of ['0', '-3', 'abc', '1.5', '99999999999999999999999', '0x10', '1e3', ' 7', '9223372036854775808']) {
      expect((await admin(`/admin/accounts/${accountId}/ledger?before_id=${bad}`)).status, bad).toBe(400);
    }
  });
});
