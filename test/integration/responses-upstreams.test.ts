/**
 * POST /v1/responses through the real gateway to upstreams of every kind, served by the fake
 * upstream: a Responses-speaking one (the fake's scripted answers replayed through the
 * openai-responses provider), an Anthropic one and an OpenAI chat one. The official `openai`
 * SDK is the client; what reaches the upstream is read back from the fake's request log.
 */
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import { scriptsDir, startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { recordingFetch } from '../support/stream-checks.js';
import { bodyProblems, loadSpec, splitSse, streamProblems } from './cross-support.js';

let fake: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;
const rec = recordingFetch();

beforeAll(async () => {
  fake = await startFakeUpstream();
  const doc = fakeCatalogDocument(fake) as { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };
  doc.providers['up-responses'] = { type: 'openai-responses', base_url: `${fake.url}/v1`, api_key_env: FAKE_KEY_ENV, max_retries: 0 };
  doc.models.push({
    id: 'up-responses',
    provider: 'up-responses',
    upstream_model: 'gpt-5-mini',
    price: { input: '1', output: '4' },
    max_output_tokens: 32_000,
    capabilities: { tools: true, reasoning: true, images: true },
  });
  const catalog = buildCatalog(doc, { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'responses test catalog');
  gw = await startTestGateway({ catalog });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
  await loadSpec();
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

const upstreamBody = (i = 0) => fake.requests[i].body as Record<string, any>;
const scriptLines = (name: string) =>
  readFileSync(`${scriptsDir()}/${name}`, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)));

async function streamed(params: Record<string, unknown>): Promise<any> {
  const stream = await client.responses.create({ ...params, stream: true } as any);
  let final: any;
  for await (const ev of stream as any) if (ev.type === 'response.completed' || ev.type === 'response.incomplete') final = ev.response;
  expect(streamProblems('responses', splitSse(await rec.last().text()))).toEqual([]);
  return final;
}

describe('a Responses-speaking upstream (scripted answers)', () => {
  it('passes reasoning summaries and the final encrypted_content through, and back byte for byte', async () => {
    fake.script('script:openai-responses/stream-reasoning-summary');
    const input: ResponseInputItem[] = [{ role: 'user', content: 'How do I cross the street?' }];
    const final = await streamed({ model: 'up-responses', input, reasoning: { effort: 'high', summary: 'detailed' }, include: ['reasoning.encrypted_content'] });
    const events = scriptLines('openai-responses/stream-reasoning-summary.sse');
    const recorded = events.find((e) => e.type === 'response.completed').response;
    // The API re-encrypts at every step (added, done, completed differ); the stream's done item is what passes.
    const doneItem = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning').item;
    const [rs, msg] = final.output;
    expect(rs.encrypted_content).toBe(doneItem.encrypted_content);
    expect(rs.summary[0].text).toBe(recorded.output[0].summary.map((s: any) => s.text).join('\n\n'));
    expect(msg.content[0].text).toBe(recorded.output[1].content[0].text);
    expect(final.usage).toMatchObject({ input_tokens: recorded.usage.input_tokens, output_tokens: recorded.usage.output_tokens });
    const sent = upstreamBody();
    expect(sent).toMatchObject({ model: 'gpt-5-mini', store: false, stream: true, reasoning: { effort: 'high', summary: 'detailed' } });
    expect(sent.include).toContain('reasoning.encrypted_content');

    fake.script('words:5');
    await client.responses.create({ model: 'up-responses', reasoning: { effort: 'high' }, input: [...input, ...final.output, { role: 'user', content: 'And at night?' }] });
    const replay = upstreamBody(1).input;
    expect(replay.map((i: any) => i.type ?? i.role)).toEqual(['message', 'reasoning', 'message', 'message']);
    expect(replay[1].encrypted_content).toBe(doneItem.encrypted_content);
  });

  it('streams a function call, and serves it whole without streaming', async () => {
    fake.script('script:openai-responses/stream-function-call', 'script:openai-responses/stream-function-call');
    const tools = [{ type: 'function' as const, name: 'get_capital', parameters: { type: 'object', properties: { country: { type: 'string' } } }, strict: false }];
    const final = await streamed({ model: 'up-responses', input: 'What is the capital of France?', tools });
    expect(final.output[0]).toMatchObject({ type: 'function_call', name: 'get_capital', call_id: 'call_SwyCapital0000000000001', arguments: '{"country":"France"}' });
    const whole = await client.responses.create({ model: 'up-responses', input: 'What is the capital of France?', tools });
    expect(whole.output[0]).toMatchObject({ type: 'function_call', arguments: '{"country":"France"}' });
    expect(upstreamBody().tools).toEqual([{ type: 'function', name: 'get_capital', parameters: tools[0].parameters, strict: false }]);
  });

  it('serves non-streamed requests from a JSON Response body, and from a stream sent although stream:false was asked', async () => {
    fake.script('script:openai-responses/stream-text', 'script:openai-responses/response-reasoning-summary-and-text');
    const text = await client.responses.create({ model: 'up-responses', input: 'hi' });
    const recorded = scriptLines('openai-responses/stream-text.sse').find((e) => e.type === 'response.completed').response;
    expect(text.output_text).toBe(recorded.output[0].content[0].text);
    await expect(bodyProblems('responses', 200, JSON.parse(await rec.last().text()))).toEqual([]);
    const json = JSON.parse(readFileSync(`${scriptsDir()}/openai-responses/response-reasoning-summary-and-text.json`, 'utf8'));
    const both = await client.responses.create({ model: 'up-responses', input: 'hi', reasoning: { effort: 'low' } });
    expect(both.output.map((o) => o.type)).toEqual(json.output.map((o: any) => o.type));
    expect((both.output[0] as any).encrypted_content).toBe(json.output[0].encrypted_content);
    expect([upstreamBody(0).stream, upstreamBody(1).stream]).toEqual([false, false]);
  });

  it('turns an in-stream error into an HTTP error before the first byte', async () => {
    fake.script('script:openai-responses/stream-error-insufficient-quota');
    await expect(client.responses.create({ model: 'up-responses', input: 'hi', stream: true })).rejects.toMatchObject({ status: 429, code: 'insufficient_quota' });
  });

  it('forwards hosted tools and hosted items untouched, without a warning', async () => {
    fake.script('words:3');
    const res = await client.responses
      .create({ model: 'up-responses', input: [{ role: 'user', content: 'news?' }, { type: 'web_search_call', id: 'ws_1', status: 'completed' } as any], tools: [{ type: 'web_search' }, { type: 'namespace', name: 'ns', tools: [] } as any] })
      .withResponse();
    expect(res.response.headers.get('x-switchyard-warnings')).toBeNull();
    expect(upstreamBody().tools).toEqual([{ type: 'web_search' }, { type: 'namespace', name: 'ns', tools: [] }]);
    expect(upstreamBody().input[1]).toEqual({ type: 'web_search_call', id: 'ws_1', status: 'completed' });
  });
});

describe('an Anthropic upstream', () => {
  it('wraps the thinking signature in a swy1 envelope and restores it exactly on the next turn', async () => {
    fake.script('script:anthropic-messages/stream-thinking');
    const input: ResponseInputItem[] = [{ role: 'user', content: 'How do I cross the street?' }];
    const final = await streamed({ model: 'up-anthropic', input, reasoning: { effort: 'medium' }, include: ['reasoning.encrypted_content'] });
    const signature = scriptLines('anthropic-messages/stream-thinking.sse').find((e) => e.delta?.type === 'signature_delta').delta.signature;
    const rs = final.output.find((o: any) => o.type === 'reasoning');
    expect(rs.encrypted_content).toMatch(/^swy1\./);
    expect(JSON.stringify(final)).not.toContain(signature);

    fake.script('words:4');
    await client.responses.create({ model: 'up-anthropic', reasoning: { effort: 'medium' }, input: [...input, ...final.output, { role: 'user', content: 'Thanks!' }] });
    const assistant = upstreamBody(1).messages[1];
    expect(assistant.role).toBe('assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: rs.summary[0].text, signature });
  });

  it('drops hosted tools with a warning, never a 400', async () => {
    fake.script('words:3');
    const res = await client.responses.create({ model: 'up-anthropic', input: 'hi', tools: [{ type: 'web_search' }] }).withResponse();
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('x-switchyard-warnings')).toMatch(/web_search/);
    expect(upstreamBody().tools).toBeUndefined();
  });

  it('does not send a Responses upstream\'s encrypted_content to Anthropic', async () => {
    fake.script('words:3');
    await client.responses.create({
      model: 'up-anthropic',
      input: [{ role: 'user', content: 'a' }, { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: 'gAAAA-openai' }, { role: 'user', content: 'b' }] as any,
    });
    expect(JSON.stringify(upstreamBody())).not.toContain('gAAAA-openai');
  });
});

describe('an OpenAI chat upstream', () => {
  it('answers streamed and not', async () => {
    fake.script('words:6', 'words:6');
    const final = await streamed({ model: 'up-openai', input: 'hi', instructions: 'Be terse.' });
    expect(final.output[0].content[0].text.split(' ')).toHaveLength(6);
    expect(upstreamBody().messages[0]).toEqual({ role: 'system', content: 'Be terse.' });
    const whole = await client.responses.create({ model: 'up-openai', input: 'hi' });
    expect(whole.output_text.split(' ')).toHaveLength(6);
    expect(bodyProblems('responses', 200, JSON.parse(await rec.last().text()))).toEqual([]);
  });
});
