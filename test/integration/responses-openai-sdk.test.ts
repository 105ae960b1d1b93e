/**
 * POST /v1/responses through the real gateway with the official `openai` SDK, against the
 * built-in local models: plain and streamed answers, a function-call round trip, reasoning
 * carried across turns, hosted tools, and the shared pipeline (fallback, fast, ceiling).
 * Every raw body and stream event is checked against our spec and OpenAI's official schema.
 */
import OpenAI from 'openai';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_TRIGGER } from '../../src/providers/local/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { recordingFetch } from '../support/stream-checks.js';
import { bodyProblems, loadSpec, splitSse, streamProblems } from './cross-support.js';

let gw: TestGateway;
let client: OpenAI;
const rec = recordingFetch();

beforeAll(async () => {
  gw = await startTestGateway();
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
  await loadSpec();
});
afterAll(async () => gw?.close());

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** The raw body the SDK just read, validated against our spec and the official schema. */
async function lastBodyValid(): Promise<any> {
  const raw = JSON.parse(await rec.last().text());
  expect(bodyProblems('responses', 200, raw)).toEqual([]);
  return raw;
}

async function collectStream(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const ev of stream) events.push(ev);
  const frames = splitSse(await rec.last().text());
  expect(streamProblems('responses', frames)).toEqual([]);
  expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i));
  return events;
}

describe('responses.create against local models', () => {
  it('answers a string input, echoing the request settings', async () => {
    const res = await client.responses.create({ model: 'local-haiku', input: 'Hello there', instructions: 'Be brief.', max_output_tokens: 500 });
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.output_text).toContain('Hello there');
    expect([res.instructions, res.max_output_tokens, res.model]).toEqual(['Be brief.', 500, 'local-haiku']);
    expect(res.usage!.output_tokens).toBeGreaterThan(0);
    await lastBodyValid();
  });

  it('streams the full event sequence with sequence numbers, ending in response.completed', async () => {
    const events = await collectStream(await client.responses.create({ model: 'local-haiku', input: 'Stream me', stream: true }));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    const done = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(deltas.join('')).toBe(done.response.output_text ?? (done.response.output[0] as any).content[0].text);
    expect(done.response.usage!.output_tokens).toBeGreaterThan(0);
  });

  it('completes a function-call round trip with function_call_output', async () => {
    const input: ResponseInputItem[] = [{ role: 'user', content: 'What is the weather in Paris? Use get_weather.' }];
    const first = await client.responses.create({ model: 'local-sonnet', input, tools: [weatherTool] });
    await lastBodyValid();
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse((call as any).arguments)).toHaveProperty('city');
    const second = await client.responses.create({
      model: 'local-sonnet',
      tools: [weatherTool],
      input: [...input, ...(first.output as ResponseInputItem[]), { type: 'function_call_output', call_id: (call as any).call_id, output: 'Sunny, 24 C' }],
    });
    expect(second.output.some((o) => o.type === 'function_call')).toBe(false);
    expect(second.output_text).toContain('Sunny, 24 C');
  });

  it('streams a function call as arguments deltas and .done', async () => {
    const events = await collectStream(
      await client.responses.create({ model: 'local-sonnet', input: 'Weather in Oslo please (get_weather)', tools: [weatherTool], stream: true }),
    );
    const args = events.flatMap((e) => (e.type === 'response.function_call_arguments.delta' ? [e.delta] : [])).join('');
    const done = events.find((e) => e.type === 'response.function_call_arguments.done') as any;
    expect(done.arguments).toBe(args);
    expect(JSON.parse(args)).toHaveProperty('city');
  });

  it('carries reasoning across turns as encrypted_content (a swy1 envelope for local reasoning)', async () => {
    const input: ResponseInputItem[] = [{ role: 'user', content: 'Weather in Rome? call get_weather' }];
    const events = await collectStream(
      await client.responses.create({ model: 'local-sonnet', input, tools: [weatherTool], reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], stream: true }),
    );
    const types = events.map((e) => e.type);
    expect(types).toContain('response.reasoning_summary_text.delta');
    const final = (events.at(-1) as any).response;
    const reasoning = final.output.find((o: any) => o.type === 'reasoning');
    expect(reasoning.encrypted_content).toMatch(/^swy1\./);
    expect(reasoning.summary[0].text.length).toBeGreaterThan(0);
    const call = final.output.find((o: any) => o.type === 'function_call');
    const next = await client.responses.create({
      model: 'local-sonnet',
      tools: [weatherTool],
      reasoning: { effort: 'low' },
      input: [...input, ...final.output, { type: 'function_call_output', call_id: call.call_id, output: 'Rainy' }],
    });
    expect(next.output_text).toContain('Rainy');
    // A tampered envelope is refused rather than forwarded as someone else's signature.
    const bad = { ...reasoning, encrypted_content: 'swy1.bm90IGpzb24' };
    await expect(client.responses.create({ model: 'local-sonnet', input: [...input, bad, { role: 'user', content: 'more' }] })).rejects.toMatchObject({
      status: 400,
      param: 'input.1.encrypted_content',
    });
  });

  it('drops hosted tools with a warning header, never a 400', async () => {
    const res = await client.responses
      .create({ model: 'local-haiku', input: 'hi', tools: [{ type: 'web_search' }, weatherTool] as any })
      .withResponse();
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('x-switchyard-warnings')).toMatch(/hosted tools dropped.*web_search/);
    expect(res.data.tools.map((t: any) => t.type)).toEqual(['function', 'web_search']);
  });

  it('an item_reference naming no stored item is a 404 naming its place, never silently dropped', async () => {
    const err = await client.responses
      .create({ model: 'local-haiku', input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_old' }, { role: 'user', content: 'again' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.error).toMatchObject({ param: 'input.1', message: expect.stringContaining("'msg_old'") });
  });
});

describe('the shared pipeline on /v1/responses', () => {
  it('falls back after a refusal and reports the hops', async () => {
    const res = await client.responses.create({ model: 'local-late-refusal', input: `Please ${REFUSAL_TRIGGER}` }).withResponse();
    const body = res.data as any;
    expect(body.model).toBe('local-haiku');
    expect(body.switchyard.attempts.map((a: any) => [a.model, a.outcome])).toEqual([['local-late-refusal', 'refusal'], ['local-haiku', 'ok']]);
    expect(res.response.headers.get('x-switchyard-attempts')).toBe('local-late-refusal=refusal, local-haiku=ok');
    await lastBodyValid();
  });

  it('serves the fast variant when asked', async () => {
    const res = await client.responses.create({ model: 'local-sonnet', input: 'quick one', fast: true } as any).withResponse();
    expect(res.response.headers.get('x-switchyard-variant')).toBe('fast');
    expect((res.data as any).switchyard.served_variant).toBe('fast');
  });

  it('cuts at the output ceiling: status incomplete, reason max_output_tokens, the cut item incomplete', async () => {
    const res = await client.responses.create({ model: 'local-haiku', input: 'Tell me everything', max_output_tokens: 16 });
    expect(res.status).toBe('incomplete');
    expect(res.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(res.usage!.output_tokens).toBeLessThanOrEqual(16);
    expect(res.output.map((i) => (i as { status?: string }).status)).toEqual(['incomplete']);
    await lastBodyValid();
  });

  it('a refusal without fallback keeps its explanation as a refusal part, streamed or not', async () => {
    const input = `Please ${REFUSAL_TRIGGER}`;
    const res = await client.responses.create({ model: 'local-sonnet', input, fallbacks: [] } as any);
    await lastBodyValid();
    expect(res.incomplete_details).toEqual({ reason: 'content_filter' });
    const part = { type: 'refusal', refusal: expect.stringContaining('refused') };
    expect(res.output).toEqual([expect.objectContaining({ type: 'message', status: 'completed', content: [part] })]);

    const stream = client.responses.stream({ model: 'local-sonnet', input, fallbacks: [] } as any);
    const refusals: string[] = [];
    stream.on('response.refusal.delta', (e) => refusals.push(e.delta));
    const final = await stream.finalResponse();
    expect(refusals.join('')).toBe((res.output[0] as any).content[0].refusal);
    const withoutIds = (items: unknown[]) => items.map(({ id: _id, ...item }: any) => item);
    expect(final.output).toMatchObject(withoutIds(res.output));
  });

  it('rejects an unknown model with a 404 in OpenAI shape', async () => {
    await expect(client.responses.create({ model: 'nope', input: 'x' })).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });
});
