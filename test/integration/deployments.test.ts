/**
 * Several deployments per model through the real server and the fake upstream: the spread by
 * weight, a retryable failure moved to another deployment (one answer, every hop reported), the
 * least-in-flight and lowest-latency strategies, and session affinity. Each deployment names its
 * own upstream model, so the fake's requests show where each call went.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRng } from '../../src/providers/local/make-seed.js';
import { rendezvous } from '../../src/routing/index.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { userTurn } from './routing-support.js';

let fake: FakeUpstream;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;

const price = { input: '1', output: '4' };
const deployment = (name: string, provider: string, upstream: string, weight = 1) => ({ name, provider, upstream_model: upstream, weight });

beforeAll(async () => {
  fake = await startFakeUpstream({ scenario: { words: 3 } });
  const catalog = fakeCatalog(fake, {
    models: [
      { id: 'spread', price, deployments: [deployment('a', 'up-openai', 'spread-a', 1), deployment('b', 'up-openai', 'spread-b', 2), deployment('c', 'up-openai', 'spread-c', 7)] },
      {
        id: 'overloaded',
        price,
        // The 529 deployment is picked first (weight), answers with retry-after and cools down.
        deployments: [deployment('busy', 'up-anthropic', 'status:529?retryAfter=30', 1e6), deployment('spare', 'up-anthropic', 'claude-spare', 1)],
      },
      {
        id: 'limited',
        price,
        // retry-after 1 s: a provider retry would wait for it; with a spare available there is none.
        deployments: [deployment('limited', 'up-openai', 'status:429?retryAfter=1', 1e6), { ...deployment('spare', 'up-openai', 'gpt-spare', 1), price: { input: '2', output: '8' } }],
      },
      {
        id: 'least',
        price,
        routing: { strategy: 'least_in_flight' },
        deployments: [deployment('a', 'up-openai', 'least-a'), deployment('b', 'up-openai', 'least-b'), deployment('c', 'up-openai', 'least-c')],
      },
      {
        id: 'fastest',
        price,
        routing: { strategy: 'lowest_latency' },
        deployments: [deployment('slow', 'up-openai', 'words:3?chunkDelayMs=80'), deployment('quick', 'up-openai', 'words:3')],
      },
      { id: 'sticky', price, deployments: [deployment('a', 'up-openai', 'sticky-a'), deployment('b', 'up-openai', 'sticky-b'), deployment('c', 'up-openai', 'sticky-c')] },
    ],
  });
  // Seeded: the weighted picks are the same on every run.
  gw = await startTestGateway({ catalog, random: makeRng(2026) });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** The hops of an answer, from `x-switchyard-attempts`. */
const hops = (headers: Headers) => (headers.get('x-switchyard-attempts') ?? '').split(', ');
/** The deployment that answered. */
const servedBy = (headers: Headers) => hops(headers).at(-1)!.split('=')[0];
/** Calls the fake received for an upstream model. */
const callsTo = (upstream: string) => fake.requests.filter((r) => (r.body as { model?: string })?.model === upstream).length;

async function chat(model: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) {
  const { data, response } = await openai.chat.completions.create({ model, max_tokens: 50, messages: userTurn('Hi'), ...extra }).withResponse();
  expect(data.choices[0].message.content).toBeTruthy();
  return { data, served: servedBy(response.headers), headers: response.headers };
}

describe('deployments', () => {
  it('spreads 300 requests over three deployments by weight (1/2/7)', async () => {
    const counts: Record<string, number> = {};
    for (let i = 0; i < 300; i++) {
      const { served } = await chat('spread');
      counts[served] = (counts[served] ?? 0) + 1;
    }
    const expected = { 'spread/a': 30, 'spread/b': 60, 'spread/c': 210 };
    const chiSquare = Object.entries(expected).reduce((sum, [id, e]) => sum + ((counts[id] ?? 0) - e) ** 2 / e, 0);
    // 13.8: the 0.1% critical value for 2 degrees of freedom.
    expect(chiSquare, JSON.stringify(counts)).toBeLessThan(13.8);
    expect(callsTo('spread-a') + callsTo('spread-b') + callsTo('spread-c')).toBe(300);
  });

  it('a 529 with retry-after: the Anthropic SDK streams one answer from the other deployment, both hops reported; the next request skips the cooled one', async () => {
    const before = callsTo('status:529?retryAfter=30');
    const { data: stream, response } = await anthropic.messages.create({ model: 'overloaded', max_tokens: 50, messages: userTurn('Hi'), stream: true }).withResponse();
    let text = '';
    const types: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    expect(text).not.toBe('');
    expect(types.filter((t) => t === 'message_start')).toHaveLength(1);
    expect(types.at(-1)).toBe('message_stop');
    expect(response.headers.get('x-switchyard-model')).toBe('overloaded');
    // One call to the busy deployment (its 30 s retry-after is past any provider retry).
    expect(callsTo('status:529?retryAfter=30') - before).toBe(1);
    // The headers of a stream go out with its first output; the usage record has every hop.
    const record = await usageRecord(response.headers.get('x-request-id')!);
    expect(record.attempts).toEqual([
      { model: 'overloaded', deployment: 'overloaded/busy', outcome: 'error', reason: expect.any(String) },
      { model: 'overloaded', deployment: 'overloaded/spare', outcome: 'ok' },
    ]);

    const { data: again, response: againResponse } = await anthropic.messages.create({ model: 'overloaded', max_tokens: 50, messages: userTurn('Hi') }).withResponse();
    expect(again.content[0]).toMatchObject({ type: 'text' });
    expect(hops(againResponse.headers)).toEqual(['overloaded/spare=ok']);
    expect(callsTo('status:529?retryAfter=30') - before).toBe(1);
  });

  it('a 429 with retry-after: the OpenAI SDK gets one answer, billed at the serving deployment\'s price, with both hops in headers and body', async () => {
    const { data, headers } = await chat('limited');
    expect(hops(headers)).toEqual(['limited/limited=error', 'limited/spare=ok']);
    // Moved on at once: the rate-limited deployment was called once, not retried after its 1 s.
    expect(callsTo('status:429?retryAfter=1')).toBe(1);
    expect((data as any).switchyard.attempts).toEqual([
      { model: 'limited', deployment: 'limited/limited', outcome: 'error', reason: expect.any(String) },
      { model: 'limited', deployment: 'limited/spare', outcome: 'ok' },
    ]);
    const record = await usageRecord(headers.get('x-request-id')!);
    // $2 / $8 per million: 2000 and 8000 nanodollars per token.
    expect(BigInt(record.cost)).toBe(BigInt(data.usage!.prompt_tokens) * 2000n + BigInt(data.usage!.completion_tokens) * 8000n);
  });

  it('least_in_flight: while a long call runs on one deployment, the others take the requests', async () => {
    fake.script({ words: 40, chunkDelayMs: 25 });
    const seen = fake.requests.length;
    const long = chat('least');
    while (fake.requests.length === seen) await new Promise((r) => setTimeout(r, 5));
    const busy = `least/${(fake.requests[seen].body as { model: string }).model.slice('least-'.length)}`;
    const served = new Set<string>();
    for (let i = 0; i < 10; i++) served.add((await chat('least')).served);
    expect(served.has(busy)).toBe(false);
    expect((await long).served).toBe(busy);
  });

  it('lowest_latency: each deployment is measured once, then the quicker one takes every request', async () => {
    const served: string[] = [];
    for (let i = 0; i < 10; i++) served.push((await chat('fastest')).served);
    expect(new Set(served.slice(0, 2))).toEqual(new Set(['fastest/slow', 'fastest/quick']));
    expect(served.slice(2)).toEqual(Array(8).fill('fastest/quick'));
  });

  it('a session stays on one deployment across 20 requests, sessions spread, and a session moves when its deployment fails', async () => {
    const deployments = gw.gateway.catalog.models.get('sticky')!.deployments;
    const session = { headers: { 'x-claude-code-session-id': 'session-one' } };
    const home = rendezvous(deployments, 'session-one').id;
    for (let i = 0; i < 20; i++) {
      const { response } = await anthropic.messages.create({ model: 'sticky', max_tokens: 50, messages: userTurn(`turn ${i}`) }, session).withResponse();
      expect(servedBy(response.headers)).toBe(home);
    }
    // Other sessions (OpenAI's prompt_cache_key) land where rendezvous hashing puts them, not all on one.
    const landed = new Set<string>();
    for (let s = 0; s < 8; s++) {
      const { served } = await chat('sticky', { prompt_cache_key: `other-${s}` });
      expect(served).toBe(rendezvous(deployments, `other-${s}`).id);
      landed.add(served);
    }
    expect(landed.size).toBeGreaterThan(1);

    // Its deployment answers 529: the request moves to the session's next deployment, and stays.
    fake.script({ status: 529, retryAfter: 30 });
    const next = rendezvous(deployments.filter((d) => d.id !== home), 'session-one').id;
    const { response } = await anthropic.messages.create({ model: 'sticky', max_tokens: 50, messages: userTurn('again') }, session).withResponse();
    expect(hops(response.headers)).toEqual([`${home}=error`, `${next}=ok`]);
    for (let i = 0; i < 5; i++) {
      const { response: later } = await anthropic.messages.create({ model: 'sticky', max_tokens: 50, messages: userTurn(`later ${i}`) }, session).withResponse();
      expect(hops(later.headers)).toEqual([`${next}=ok`]);
    }
  });
});

/** The usage record of a request, from the admin API (settlement may trail the answer). */
async function usageRecord(requestId: string): Promise<{ attempts: unknown[]; cost: string | number }> {
  for (let i = 0; i < 100; i++) {
    const res = await gw.admin(`/admin/accounts/${gw.accountId}/usage?limit=50`);
    const body = (await res.json()) as { data: Array<{ request_id: string; attempts: unknown[]; cost: string | number }> };
    const found = body.data?.find((r) => r.request_id === requestId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no usage record for ${requestId}`);
}
