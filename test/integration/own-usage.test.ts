/**
 * GET /v1/usage through the real server with the official OpenAI SDK: a key lists its own
 * requests (never another key's, nor another account's), newest first a page at a time, filtered
 * by time, model and session; bad filters are 400s in OpenAI's shape.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let mine: string;
let sibling: string;

const usage = async (key: string, params: Record<string, string> = {}) => {
  const res = await fetch(`${gw.url}/v1/usage?${new URLSearchParams(params)}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
};
const ask = (key: string, model: string, session?: string) =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions
    .create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }], ...(session ? { prompt_cache_key: session } : {}) })
    .withResponse();

beforeAll(async () => {
  gw = await startTestGateway();
  mine = gw.key;
  sibling = ((await (await gw.admin('/admin/keys', 'POST', { account_id: gw.accountId, name: 'sibling' })).json()) as any).key;
});
afterAll(async () => gw?.close());

describe('GET /v1/usage', () => {
  const ids: string[] = [];
  let between = '';

  beforeAll(async () => {
    for (const [model, session] of [['local-haiku', 's-1'], ['local-sonnet', 's-2']] as const) ids.push((await ask(mine, model, session)).response.headers.get('x-request-id')!);
    await new Promise((r) => setTimeout(r, 20));
    between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    ids.push((await ask(mine, 'local-haiku', 's-1')).response.headers.get('x-request-id')!);
    await ask(sibling, 'local-haiku', 's-1');
    const other = await gw.newAccount();
    await ask(other.key, 'local-haiku', 's-1');
    await gw.gateway.ledger.settled();
  });

  it("lists the calling key's own requests, newest first, with their usage", async () => {
    const { status, body } = await usage(mine);
    expect(status).toBe(200);
    expect(body.data.map((r: any) => r.request_id)).toEqual([...ids].reverse());
    expect(body).toMatchObject({ has_more: false, first_id: ids[2], last_id: ids[0] });
    const [newest] = body.data;
    expect(newest).toMatchObject({ account_id: gw.accountId, model_requested: 'local-haiku', model_served: 'local-haiku', status: 'ok', session: 's-1', unit: expect.any(String) });
    expect(newest.output_tokens).toBeGreaterThan(0);
    expect(newest.cost).toBeGreaterThan(0);
  });

  it('pages with limit and before_id', async () => {
    const first = await usage(mine, { limit: '2' });
    expect(first.body.data.map((r: any) => r.request_id)).toEqual([ids[2], ids[1]]);
    expect(first.body.has_more).toBe(true);
    const second = await usage(mine, { limit: '2', before_id: first.body.last_id });
    expect(second.body.data.map((r: any) => r.request_id)).toEqual([ids[0]]);
    expect(second.body.has_more).toBe(false);
  });

  it('filters by model, session and time', async () => {
    const ids$ = async (p: Record<string, string>) => (await usage(mine, p)).body.data.map((r: any) => r.request_id);
    expect(await ids$({ model: 'local-sonnet' })).toEqual([ids[1]]);
    expect(await ids$({ session: 's-1' })).toEqual([ids[2], ids[0]]);
    expect(await ids$({ from: between })).toEqual([ids[2]]);
    expect(await ids$({ to: between })).toEqual([ids[1], ids[0]]);
    expect(await ids$({ model: 'local-haiku', to: between })).toEqual([ids[0]]);
    expect(await ids$({ model: 'no-such-model' })).toEqual([]);
  });

  it("never shows another key's or another account's requests", async () => {
    const theirs = await usage(sibling);
    expect(theirs.body.data).toHaveLength(1);
    expect(theirs.body.data.some((r: any) => ids.includes(r.request_id))).toBe(false);
    // Another key's record is no cursor for this one.
    const cursor = await usage(mine, { before_id: theirs.body.data[0].request_id });
    expect(cursor.body.data.every((r: any) => ids.includes(r.request_id))).toBe(true);
  });

  it('bad filters are 400s in OpenAI\'s error shape; no key is a 401', async () => {
    const bad: Array<Record<string, string>> = [{ from: 'yesterday' }, { limit: '0' }, { limit: '1001' }, { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }];
    for (const params of bad) {
      const { status, body } = await usage(mine, params);
      expect(status, JSON.stringify(params)).toBe(400);
      expect(body.error).toMatchObject({ type: 'invalid_request_error', message: expect.any(String) });
    }
    expect((await fetch(`${gw.url}/v1/usage`)).status).toBe(401);
  });
});
