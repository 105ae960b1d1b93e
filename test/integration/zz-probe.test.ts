import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, it } from 'vitest';
import { startTestGateway, type TestGateway } from '/work/main/test/support/gateway.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway({ bodyLimitBytes: 1000 }); });
afterAll(async () => gw?.close());

const show = async (label: string, f: () => Promise<unknown>) => {
  try { console.log(label, JSON.stringify(await f()).slice(0, 1500)); } catch (e: any) { console.log(label, 'ERR', e?.constructor?.name, e?.status, JSON.stringify(e?.error ?? e?.message).slice(0, 500)); }
};

it('probe', async () => {
  const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
  const an = new Anthropic({ baseURL: gw.url, apiKey: gw.key });
  await show('chat plain', () => oa.chat.completions.create({ model: 'local-haiku', messages: [{ role: 'user', content: 'Hello' }] }));
  await show('chat max', () => oa.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hello' }] }));
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  await show('chat tool', () => oa.chat.completions.create({ model: 'local-haiku', tools, messages: [{ role: 'user', content: 'Use get_weather for Paris' }] }));
  await show('chat reasoning', async () => { const s = await oa.chat.completions.create({ model: 'local-sonnet', stream: true, stream_options: { include_usage: true }, reasoning_effort: 'low', max_tokens: 60, messages: [{ role: 'user', content: 'Think' }] } as any); const out: any[] = []; for await (const c of s) out.push(c); return out; });
  await show('msg plain', () => an.messages.create({ model: 'local-haiku', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }));
  await show('msg system role', () => an.messages.create({ model: 'local-haiku', max_tokens: 50, messages: [{ role: 'system', content: 'be nice' } as any, { role: 'user', content: 'Hi' }] }));
  await show('msg thinking', () => an.messages.create({ model: 'local-sonnet', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Hi' }] }));
  await show('msg stream', async () => { const s = an.messages.stream({ model: 'local-sonnet', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Hi' }] }); const ev: any[] = []; s.on('streamEvent', (e) => ev.push(e.type)); await s.finalMessage(); return ev; });
  await show('msg beta', () => an.beta.messages.create({ model: 'local-haiku', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }));
  await show('msg bad', () => an.messages.create({ model: 'local-haiku', max_tokens: 'x' as any, messages: [{ role: 'user', content: 'Hi' }] }));
  await show('msg 404', () => an.messages.create({ model: 'nope', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }));
  await show('chat 404', () => oa.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'Hello' }] }));
  await show('chat 401', () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'bad' }).chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'Hello' }] }));
  await show('msg 413', () => an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'x'.repeat(2000) }] }));
  for (const [m, p, h, b] of [['GET', '/', {}, undefined], ['HEAD', '/', {}, undefined], ['GET', '/v1/messages', {}, undefined], ['GET', '/nope', {}, undefined], ['POST', '/v1/messages', { 'x-api-key': gw.key, 'content-type': 'text/plain' }, 'hi'], ['POST', '/v1/messages', { 'x-api-key': gw.key, 'content-type': 'application/json' }, '{bad'], ['POST', '/v1/messages?beta=true', { 'x-api-key': gw.key, 'content-type': 'application/json', 'anthropic-version': 'x' }, '{}'], ['POST', '/v1/chat/completions', { authorization: 'Bearer ' + gw.key, 'content-type': 'application/json' }, '{"model":"local-haiku","messages":[{"role":"user","content":"hi"}],"temperature":"hot"}']] as any[]) {
    const r = await fetch(gw.url + p, { method: m, headers: h, body: b });
    console.log(m, p, r.status, r.headers.get('x-request-id'), r.headers.get('request-id'), r.headers.get('content-type'), (await r.text()).slice(0, 300));
  }
}, 60000);
