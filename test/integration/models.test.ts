/**
 * GET /v1/models and GET /v1/models/{id} through the real gateway with both official SDKs:
 * OpenAI's list shape by default, Anthropic's when `anthropic-version` is sent, each entry with
 * the gateway's catalog details. Raw bodies are validated against generated/openapi.yaml.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
const rec = recordingFetch();
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  gw = await startTestGateway();
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
});
afterAll(async () => gw?.close());

/** Every built-in model README names. */
const VISIBLE = ['local-sonnet', 'local-sonnet-fast', 'local-haiku', 'local-opus', 'local-late-refusal'];
/** Each listed alias, and the model it names (listed right after it). */
const ALIASES: Record<string, string> = { 'local-sonnet-latest': 'local-sonnet', 'local-haiku-latest': 'local-haiku', 'local-opus-latest': 'local-opus' };
const LISTED = [...VISIBLE, ...Object.keys(ALIASES)];

async function lastBody(operationId: string): Promise<any> {
  const body = JSON.parse(await rec.last().text());
  expect(await bodyErrors(operationId, 200, body)).toEqual([]);
  return body;
}

function expectCatalogDetails(entry: any): void {
  expect(entry.pricing).toEqual({
    input: expect.any(Number),
    output: expect.any(Number),
    cache_read: expect.any(Number),
    cache_write: expect.any(Number),
    cache_write_1h: expect.any(Number),
    unit: 'nanodollars per token',
  });
  expect(entry.context_window).toBe(200_000);
  expect(entry.max_output_tokens).toBeGreaterThan(0);
  expect(entry.capabilities).toEqual({ tools: true, reasoning: expect.any(Boolean), images: true });
  expect(entry).toHaveProperty('fast_variant');
}

describe('GET /v1/models', () => {
  it('OpenAI SDK: models.list() in OpenAI shape, every built-in model README names', async () => {
    const ids: string[] = [];
    for await (const m of openai.models.list()) {
      expect(m).toMatchObject({ object: 'model', owned_by: 'local', created: 1735689600 });
      expectCatalogDetails(m);
      ids.push(m.id);
    }
    expect(ids.sort()).toEqual([...LISTED].sort());
    const body = await lastBody('listModels');
    for (const [alias, model] of Object.entries(ALIASES)) {
      const entry = body.data.find((m: any) => m.id === alias);
      expect(entry).toEqual({ ...body.data.find((m: any) => m.id === model), id: alias, alias_of: model });
      expect(body.data.indexOf(entry)).toBe(body.data.findIndex((m: any) => m.id === model) + 1);
    }
    expect(body.object).toBe('list');
    const sonnet = body.data.find((m: any) => m.id === 'local-sonnet');
    expect(sonnet).toMatchObject({ pricing: { input: 3000, output: 15000, cache_read: 300, cache_write: 3750, cache_write_1h: 6000 }, max_output_tokens: 64_000, fast_variant: 'local-sonnet-fast' });
    expect(body.data.find((m: any) => m.id === 'local-haiku').fast_variant).toBeNull();
  });

  it('OpenAI SDK: models.retrieve() by id and by alias; unknown is a 404', async () => {
    const m = await openai.models.retrieve('local-haiku');
    expect(m).toMatchObject({ id: 'local-haiku', object: 'model', capabilities: { reasoning: false } });
    await lastBody('getModel');
    expect((await openai.models.retrieve('local-opus-latest')).id).toBe('local-opus');
    await expect(openai.models.retrieve('no-such-model')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('Anthropic SDK: models.list() in Anthropic shape', async () => {
    const page = await anthropic.models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(VISIBLE));
    for (const m of page.data) {
      expect(m).toMatchObject({ type: 'model', display_name: expect.any(String), created_at: '2025-01-01T00:00:00.000Z' });
      expectCatalogDetails(m);
    }
    const body = await lastBody('listModels');
    expect(body).toMatchObject({ has_more: false, first_id: ids[0], last_id: ids.at(-1) });
    expect(body.object).toBeUndefined();
    expect(body.data.find((m: any) => m.id === 'local-sonnet').display_name).toBe('Local Sonnet');
  });

  it("Anthropic SDK: pages with limit, after_id and before_id; auto-pagination walks the whole list", async () => {
    const all = (await anthropic.models.list()).data.map((m) => m.id);
    const first = await anthropic.models.list({ limit: 2 });
    expect(first.data.map((m) => m.id)).toEqual(all.slice(0, 2));
    expect(await lastBody('listModels')).toMatchObject({ has_more: true, first_id: all[0], last_id: all[1] });

    const walked: string[] = [];
    for await (const m of anthropic.models.list({ limit: 2 })) walked.push(m.id);
    expect(walked).toEqual(all);

    expect(all).toHaveLength(LISTED.length);
    const before = await anthropic.models.list({ limit: 1, before_id: all[2] });
    expect(before.data.map((m) => m.id)).toEqual([all[1]]);
    expect(await lastBody('listModels')).toMatchObject({ has_more: true });
    // The SDK's beta call adds ?beta=true; unknown query parameters are ignored, as the providers do.
    expect((await anthropic.beta.models.list({ limit: 1, after_id: all.at(-2)! })).data.map((m) => m.id)).toEqual([all.at(-1)]);
    expect(await lastBody('listModels')).toMatchObject({ has_more: false });
  });

  it('paging errors are 400s naming the parameter; the OpenAI shape is never paged', async () => {
    const headers = { authorization: `Bearer ${gw.key}`, 'anthropic-version': '2023-06-01' };
    for (const [query, param] of [['limit=0', 'limit'], ['after_id=nope', 'after_id'], ['after_id=local-haiku&before_id=local-opus', 'before_id']]) {
      const res = await fetch(`${gw.url}/v1/models?${query}`, { headers });
      expect(res.status, query).toBe(400);
      const body = await res.json();
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(param) } });
    }
    const res = await fetch(`${gw.url}/v1/models?limit=1&foo=bar`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(((await res.json()) as { data: unknown[] }).data.length).toBeGreaterThan(1);
  });

  it('Anthropic SDK: models.retrieve(); unknown is a 404 in Anthropic shape', async () => {
    const m = await anthropic.models.retrieve('local-sonnet');
    expect(m).toMatchObject({ type: 'model', id: 'local-sonnet', display_name: 'Local Sonnet', fast_variant: 'local-sonnet-fast' });
    await lastBody('getModel');
    const err = await anthropic.models.retrieve('no-such-model').catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(await bodyErrors('getModel', 404, err.error)).toEqual([]);
  });

  it('needs a key, and answers 401 in the caller\'s shape', async () => {
    const res = await fetch(`${gw.url}/v1/models`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { type: 'authentication_error' } });
    const bad = new Anthropic({ baseURL: gw.url, apiKey: 'sk-sy-not-a-key', maxRetries: 0 });
    const err = await bad.models.list().catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(await bodyErrors('listModels', 401, err.error)).toEqual([]);
  });
});
