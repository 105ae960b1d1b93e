/**
 * Routing against real HTTP upstreams (tools/fake-upstream): scripted refusals from both
 * providers, Azure's 400 content filter, fallback on unavailability, and the reasoning mapping
 * as the upstream receives it.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, checkChatStream, checkMessagesStream, recordingFetch } from '../support/stream-checks.js';
import { capturesOf, checkResponsesStream, post, userTurn } from './routing-support.js';

const AZURE_FILTER = fileURLToPath(new URL('./fixtures/error-400-azure-content-filter.json', import.meta.url));

let fake: FakeUpstream;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;
const rec = recordingFetch();

beforeAll(async () => {
  fake = await startFakeUpstream();
  const m = (id: string, provider: string, upstream: string, extra: Record<string, unknown> = {}) => ({
    id, provider, upstream_model: upstream, price: { input: '1', output: '4' }, capabilities: { reasoning: true }, ...extra,
  });
  const catalog = fakeCatalog(fake, {
    models: [
      m('claude-refuses', 'up-anthropic', 'script:anthropic-messages/stream-refusal', { fallbacks: ['up-openai'] }),
      m('gpt-refuses', 'up-openai', 'script:openai-chat/stream-refusal', { fallbacks: ['up-anthropic'] }),
      m('azure-filtered', 'up-openai', `script:${AZURE_FILTER}`, { fallbacks: ['up-anthropic'] }),
      m('flaky', 'up-openai', 'status:500', { fallbacks: ['up-anthropic'], fallback_on_unavailable: true }),
      m('flaky-strict', 'up-openai', 'status:500', { fallbacks: ['up-anthropic'] }),
    ],
  });
  gw = await startTestGateway({ catalog });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** The body the fake upstream received last. */
const lastUpstreamBody = () => fake.requests.at(-1)!.body as Record<string, any>;

describe('scripted upstream refusals', () => {
  it('Anthropic stop_reason refusal (stream) falls back before output: one message_start, the replier named', async () => {
    const stream = await anthropic.messages.create({ model: 'claude-refuses', max_tokens: 200, messages: userTurn('Hi'), stream: true });
    for await (const _ of stream) void _;
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.events.filter((e) => e.type === 'message_start')).toHaveLength(1);
    expect(wire.events[0].message.model).toBe('up-openai');
    expect(wire.blocks.map((b) => b.type)).toEqual(['fallback', 'text']);
    expect(wire.blocks[0]).toMatchObject({ from: 'claude-refuses', to: 'up-openai' });
    expect(wire.stopReason).toBe('end_turn');
    expect(wire.usage.iterations).toBe(2);
  });

  it('Anthropic refusal with [] reaches a chat client as content_filter', async () => {
    const data = await openai.chat.completions.create({ model: 'claude-refuses', messages: userTurn('Hi'), fallbacks: [] } as any);
    expect(await bodyErrors('createChatCompletion', 200, data)).toEqual([]);
    expect(data.choices[0].finish_reason).toBe('content_filter');
  });

  it('OpenAI refusal deltas fall back to the next model; each attempt is billed at its own price', async () => {
    const { data: msg, response } = await anthropic.messages.create({ model: 'gpt-refuses', max_tokens: 200, messages: userTurn('Hi') }).withResponse();
    expect(msg.model).toBe('up-anthropic');
    expect((msg.content as any[]).map((b) => b.type)).toEqual(['fallback', 'text']);
    expect((msg.usage as any).iterations).toBe(2);
    const lines = await capturesOf(gw, response.headers.get('x-request-id')!, 2);
    expect(lines.map((l) => l.model)).toEqual(['gpt-refuses', 'up-anthropic']);
    // Both are priced $1 in / $4 out per million: 1000 and 4000 nanodollars per token.
    for (const l of lines) expect(l.cost).toBe(l.tokens!.inputNoCache * 1000n + l.tokens!.output * 4000n);
    expect(lines[0].tokens!.output).toBe(11n); // the refusal text the upstream reported

    const stream = await openai.chat.completions.create({ model: 'gpt-refuses', messages: userTurn('Hi'), stream: true });
    for await (const _ of stream) void _;
    const wire = await checkChatStream(await rec.last().text());
    expect(wire.chunks.find((c) => c.switchyard?.fallback)?.switchyard.fallback).toMatchObject({ from: 'gpt-refuses', to: 'up-anthropic' });
    expect(wire.finishReason).toBe('stop');
  });

  it("Azure's HTTP 400 content_filter is a refusal: fallback, or with [] the 400 reaches the client", async () => {
    const res = await post(gw, '/v1/chat/completions', { model: 'azure-filtered', messages: userTurn('Hi') });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('up-anthropic');
    expect(res.body.switchyard.attempts).toEqual([
      { model: 'azure-filtered', outcome: 'refusal', reason: expect.stringContaining('filtered') },
      { model: 'up-anthropic', outcome: 'ok' },
    ]);
    expect(res.headers.get('x-switchyard-attempts')).toBe('azure-filtered=refusal, up-anthropic=ok');
    const none = await post(gw, '/v1/chat/completions', { model: 'azure-filtered', messages: userTurn('Hi'), fallbacks: [] });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('content_filter');
  });
});

describe('fallback on unavailability (per model, opt-in)', () => {
  it('a 500 after retries moves on only where the catalog opted in', async () => {
    const ok = await post(gw, '/v1/messages', { model: 'flaky', max_tokens: 50, messages: userTurn('Hi') });
    expect(ok.status).toBe(200);
    expect(ok.body.model).toBe('up-anthropic');
    expect(ok.body.content[0]).toMatchObject({ type: 'fallback', from: 'flaky', to: 'up-anthropic', reason: expect.stringContaining('unavailable') });
    const strict = await post(gw, '/v1/messages', { model: 'flaky-strict', max_tokens: 50, messages: userTurn('Hi') });
    expect(strict.status).toBeGreaterThanOrEqual(500);
  });

  it('a streamed Responses answer reports the outage as an error attempt, not a refusal', async () => {
    const res = await post(gw, '/v1/responses', { model: 'flaky', input: 'Hi', max_output_tokens: 50, stream: true });
    const done = (await checkResponsesStream(res.text)).at(-1);
    expect(done.type).toBe('response.completed');
    // The pipeline's record, as in a non-streamed answer: the upstream's error message.
    expect(done.response.switchyard.attempts).toEqual([
      { model: 'flaky', outcome: 'error', reason: expect.any(String) },
      { model: 'up-anthropic', outcome: 'ok' },
    ]);
    expect(res.headers.get('x-switchyard-attempts')).toBe('flaky=error');
    const chat = await post(gw, '/v1/chat/completions', { model: 'flaky', messages: userTurn('Hi'), max_tokens: 50, stream: true });
    const hop = (await checkChatStream(chat.text)).chunks.find((c) => c.switchyard?.fallback);
    expect(hop.switchyard.fallback).toMatchObject({ from: 'flaky', to: 'up-anthropic', outcome: 'error' });
  });
});

describe('reasoning controls as the upstream receives them', () => {
  it.each([
    ['low', 1024],
    ['medium', 4096],
    ['high', 16384],
  ] as const)('chat reasoning_effort %s -> Anthropic thinking.budget_tokens %i', async (effort, budget) => {
    await openai.chat.completions.create({ model: 'up-anthropic', messages: userTurn('Think'), max_tokens: 20_000, reasoning_effort: effort });
    expect(lastUpstreamBody().thinking).toEqual({ type: 'enabled', budget_tokens: budget });
    expect(lastUpstreamBody().max_tokens).toBe(20_000);
  });

  it('the budget always fits under max_tokens; below the 1024 minimum thinking is off with a warning', async () => {
    await post(gw, '/v1/chat/completions', { model: 'up-anthropic', messages: userTurn('Think'), max_tokens: 2000, thinking_effort: 'high' });
    expect(lastUpstreamBody().thinking).toEqual({ type: 'enabled', budget_tokens: 1999 });
    await post(gw, '/v1/messages', { model: 'up-anthropic', messages: userTurn('Think'), max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 500 } });
    expect(lastUpstreamBody().thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    const off = await post(gw, '/v1/chat/completions', { model: 'up-anthropic', messages: userTurn('Think'), max_tokens: 1024, reasoning_effort: 'low' });
    expect(off.status).toBe(200);
    expect(lastUpstreamBody().thinking).toBeUndefined();
    expect(off.headers.get('x-switchyard-warnings')).toMatch(/thinking turned off/);
  });

  it('a forced tool call wins over thinking on Anthropic (which rejects the pair): thinking off, with a warning', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    const forced = await post(gw, '/v1/chat/completions', {
      model: 'up-anthropic', messages: userTurn('Think, then look it up'), max_tokens: 8000, reasoning_effort: 'high', tools, tool_choice: 'required',
    });
    expect(forced.status).toBe(200);
    expect(lastUpstreamBody().thinking).toBeUndefined();
    expect(lastUpstreamBody().tool_choice).toEqual({ type: 'any' });
    expect(forced.headers.get('x-switchyard-warnings')).toMatch(/tool call is forced/);
    await post(gw, '/v1/chat/completions', { model: 'up-anthropic', messages: userTurn('Think'), max_tokens: 8000, reasoning_effort: 'high', tools, tool_choice: 'auto' });
    expect(lastUpstreamBody().thinking).toEqual({ type: 'enabled', budget_tokens: 7999 });
  });

  it.each([
    [1500, 'low'],
    [4096, 'medium'],
    [10_000, 'high'],
  ] as const)('messages thinking.budget_tokens %i -> OpenAI reasoning_effort %s', async (budget, effort) => {
    await anthropic.messages.create({ model: 'up-openai', max_tokens: 16_000, messages: userTurn('Think'), thinking: { type: 'enabled', budget_tokens: budget } });
    expect(lastUpstreamBody().reasoning_effort).toBe(effort);
    expect(lastUpstreamBody().thinking).toBeUndefined();
  });

  it('passes through where the protocols match', async () => {
    await openai.chat.completions.create({ model: 'up-openai', messages: userTurn('Think'), reasoning_effort: 'high' });
    expect(lastUpstreamBody().reasoning_effort).toBe('high');
    await anthropic.messages.create({ model: 'up-anthropic', max_tokens: 8000, messages: userTurn('Think'), thinking: { type: 'enabled', budget_tokens: 3000 } });
    expect(lastUpstreamBody().thinking).toEqual({ type: 'enabled', budget_tokens: 3000 });
    await anthropic.messages.create({ model: 'up-anthropic', max_tokens: 8000, messages: userTurn('Think') });
    expect(lastUpstreamBody().thinking).toBeUndefined();
  });
});
