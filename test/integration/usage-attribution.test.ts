/**
 * Who spent it: the end user and session a client names land on its usage records, and the admin
 * usage list filters by them. Driven with the official SDKs as agents send them.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors } from '../support/stream-checks.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

async function usage(accountId: string, query = ''): Promise<any> {
  const res = await gw.admin(`/admin/accounts/${accountId}/usage${query}`);
  const body = await res.json();
  expect(res.status).toBe(200);
  expect(await bodyErrors('adminGetUsage', 200, body)).toEqual([]);
  return body;
}

describe('usage attribution', () => {
  it('records the end user and session each protocol names, and the admin list filters by them', async () => {
    const { accountId, key } = await gw.newAccount();
    // Claude Code: its session header on every request, the user in metadata.user_id.
    const claude = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0, defaultHeaders: { 'X-Claude-Code-Session-Id': 'sess-cc-1' } });
    const msg = await claude.messages.create({ model: 'local-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], metadata: { user_id: 'alice' } }).withResponse();
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const chat = await oa.chat.completions.create({ model: 'local-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], user: 'bob', prompt_cache_key: 'conv-7' }).withResponse();
    // safety_identifier is OpenAI's successor to user: it wins when both are sent.
    const resp = await oa.responses.create({ model: 'local-haiku', max_output_tokens: 16, input: 'Hi', user: 'legacy', safety_identifier: 'alice', prompt_cache_key: 'conv-7' }).withResponse();
    const plain = await oa.chat.completions.create({ model: 'local-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    const id = (r: { response: Response }) => r.response.headers.get('x-request-id');

    const all = await usage(accountId);
    const byId = new Map(all.data.map((r: any) => [r.request_id, r]));
    expect(byId.get(id(msg))).toMatchObject({ end_user: 'alice', session: 'sess-cc-1' });
    expect(byId.get(id(chat))).toMatchObject({ end_user: 'bob', session: 'conv-7' });
    expect(byId.get(id(resp))).toMatchObject({ end_user: 'alice', session: 'conv-7' });
    expect(byId.get(id(plain))).toMatchObject({ end_user: null, session: null });

    const alice = await usage(accountId, '?end_user=alice');
    expect(alice.data.map((r: any) => r.request_id).sort()).toEqual([id(msg), id(resp)].sort());
    const conv = await usage(accountId, '?session=conv-7');
    expect(conv.data.map((r: any) => r.request_id).sort()).toEqual([id(chat), id(resp)].sort());
    const both = await usage(accountId, '?end_user=alice&session=conv-7&limit=1');
    expect(both).toMatchObject({ data: [{ request_id: id(resp) }], has_more: false });
    expect((await usage(accountId, '?end_user=nobody')).data).toEqual([]);
  });

  it('the session header wins over a body field, and long values are cut to 256 characters', async () => {
    const { accountId, key } = await gw.newAccount();
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: { 'x-claude-code-session-id': 'from-header' } });
    await oa.chat.completions.create({ model: 'local-haiku', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: 'from-body', user: 'u'.repeat(300) });
    const [record] = (await usage(accountId)).data;
    expect(record).toMatchObject({ session: 'from-header', end_user: 'u'.repeat(256) });
  });
});
