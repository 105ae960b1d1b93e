import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('GET /metrics', () => {
  it('counts requests, attempts and billed tokens in the Prometheus text format', async () => {
    const before = await (await fetch(`${gw.url}/metrics`)).text();
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    const res = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 7, messages: [{ role: 'user', content: 'count me' }] });
    const r = await fetch(`${gw.url}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    const after = await r.text();
    const delta = (name: string, labels: Record<string, string>) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(delta('switchyard_http_requests_total', { operation: 'createChatCompletion', status: '200' })).toBe(1);
    expect(delta('switchyard_attempts_total', { model: 'local-haiku', outcome: 'ok' })).toBe(1);
    expect(delta('switchyard_tokens_total', { model: 'local-haiku', kind: 'output' })).toBe(res.usage!.completion_tokens);
    expect(delta('switchyard_tokens_total', { model: 'local-haiku', kind: 'input' })).toBe(res.usage!.prompt_tokens);
    expect(after).toContain('switchyard_http_request_duration_seconds_bucket');
  });
});
