/**
 * Refusal fallbacks through the real gateway with the official SDKs and the built-in local
 * models: the refusal trigger makes local-opus, local-sonnet and local-late-refusal refuse
 * (local-late-refusal after some text); local-haiku has no classifier and answers.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultCatalog } from '../../src/config/default-catalog.js';
import { LATE_REFUSAL_PREFIX } from '../../src/providers/local/plan-output.js';
import { anthropicMessages } from '../../src/protocols/anthropic-messages/index.js';
import { countTokens } from '../../src/util/tokenizer.js';
import { holdFor } from '../ledger/http-billing.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, checkChatStream, checkMessagesStream, recordingFetch } from '../support/stream-checks.js';
import { capturesOf, checkResponsesStream, post, priced, TRIGGER, userTurn } from './routing-support.js';

let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;
const rec = recordingFetch();
const price = (id: string) => defaultCatalog().models.get(id)!.price;
const refused = userTurn(`Please answer this. ${TRIGGER}`);

beforeAll(async () => {
  gw = await startTestGateway();
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
});
afterAll(async () => gw?.close());

describe('messages: refusal fallback', () => {
  it('non-streaming, default chain: fallback blocks, the replier as model, iterations, one capture per attempt at its own price', async () => {
    const { data: msg, response } = await anthropic.messages.create({ model: 'local-opus', max_tokens: 200, messages: refused }).withResponse();
    expect(await bodyErrors('createMessage', 200, msg)).toEqual([]);
    expect(msg.model).toBe('local-haiku');
    const content = msg.content as any[];
    expect(content.slice(0, 2)).toEqual([
      { type: 'fallback', from: 'local-opus', to: 'local-sonnet', reason: expect.stringContaining('refusal') },
      { type: 'fallback', from: 'local-sonnet', to: 'local-haiku', reason: expect.stringContaining('refusal') },
    ]);
    expect(content[2].type).toBe('text');
    expect(msg.stop_reason).toBe('end_turn');
    expect((msg.usage as any).iterations).toBe(3);
    expect(response.headers.get('x-switchyard-attempts')).toBe('local-opus=refusal, local-sonnet=refusal, local-haiku=ok');
    expect(response.headers.get('x-switchyard-model')).toBe('local-haiku');

    const lines = await capturesOf(gw, response.headers.get('x-request-id')!, 3);
    expect(lines.map((l) => l.model)).toEqual(['local-opus', 'local-sonnet', 'local-haiku']);
    for (const l of lines) {
      expect(l.cost).toBe(priced(l, price(l.model!)));
      expect(l.amount).toBe(-l.cost!);
      expect(l.tokens!.inputNoCache).toBeGreaterThan(0n);
    }
    expect(lines.map((l) => l.tokens!.output)).toEqual([0n, 0n, BigInt(msg.usage.output_tokens)]);
  });

  it('streaming, refusal before output: one message_start naming the replier, then the fallback blocks and the answer', async () => {
    const stream = await anthropic.messages.create({ model: 'local-opus', max_tokens: 200, messages: refused, stream: true });
    for await (const _ of stream) void _;
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.events.filter((e) => e.type === 'message_start')).toHaveLength(1);
    expect(wire.events[0].message.model).toBe('local-haiku');
    expect(wire.blocks.map((b) => b.type)).toEqual(['fallback', 'fallback', 'text']);
    expect(wire.stopReason).toBe('end_turn');
    expect(wire.usage.iterations).toBe(3);
  });

  it('streaming, refusal after output: the refused block closes, the fallback block follows, the next model continues', async () => {
    const stream = await anthropic.messages.create({ model: 'local-late-refusal', max_tokens: 200, messages: refused, stream: true });
    for await (const _ of stream) void _;
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.events[0].message.model).toBe('local-late-refusal');
    expect(wire.blocks.map((b) => b.type)).toEqual(['text', 'fallback', 'text']);
    expect(wire.blocks[0].text).toBe(LATE_REFUSAL_PREFIX);
    expect(wire.blocks[1]).toMatchObject({ from: 'local-late-refusal', to: 'local-haiku' });
    expect(wire.blocks[2].text).toContain('You said');
    expect(wire.stopReason).toBe('end_turn');
    expect(wire.usage.iterations).toBe(2);
  });

  it('non-streaming, refusal after output: the refused text is dropped but billed', async () => {
    const { data: msg, response } = await anthropic.messages.create({ model: 'local-late-refusal', max_tokens: 200, messages: refused }).withResponse();
    expect(msg.model).toBe('local-haiku');
    expect((msg.content as any[]).map((b) => b.type)).toEqual(['fallback', 'text']);
    const lines = await capturesOf(gw, response.headers.get('x-request-id')!, 2);
    expect(lines[0].model).toBe('local-late-refusal');
    expect(lines[0].tokens!.output).toBe(BigInt(countTokens(LATE_REFUSAL_PREFIX)));
    expect(lines[0].cost).toBe(priced(lines[0], price('local-late-refusal')));
    expect(lines[1].cost).toBe(priced(lines[1], price('local-haiku')));
    expect(msg.usage.output_tokens).toBe(Number(lines[0].tokens!.output + lines[1].tokens!.output));
  });

  it('an explicit array of ids and of {model} objects replaces the default chain', async () => {
    const ids = await anthropic.messages.create({ model: 'local-opus', max_tokens: 100, messages: refused, fallbacks: ['local-haiku'] } as any);
    expect((ids.content as any[]).filter((b) => b.type === 'fallback')).toEqual([{ type: 'fallback', from: 'local-opus', to: 'local-haiku', reason: expect.any(String) }]);
    expect((ids.usage as any).iterations).toBe(2);
    const objects = await anthropic.messages.create({
      model: 'local-late-refusal', max_tokens: 100, messages: refused, stream: true,
      fallbacks: [{ model: 'local-sonnet' }, { model: 'local-haiku-latest' }],
    } as any);
    for await (const _ of objects as any) void _;
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.blocks.filter((b) => b.type === 'fallback').map((b) => `${b.from}>${b.to}`)).toEqual(['local-late-refusal>local-sonnet', 'local-sonnet>local-haiku']);
    expect(wire.usage.iterations).toBe(3);
  });

  it('[] disables fallbacks: the refusal reaches the client with stop_details', async () => {
    const msg = await anthropic.messages.create({ model: 'local-opus', max_tokens: 100, messages: refused, fallbacks: [] } as any);
    expect(msg.model).toBe('local-opus');
    expect(msg.stop_reason).toBe('refusal');
    expect((msg as any).stop_details).toMatchObject({ type: 'refusal' });
    expect(msg.content).toEqual([]);
    // One attempt, no fallback: no count (Anthropic's own beta field of that name is an array).
    expect(msg.usage).not.toHaveProperty('iterations');
    const stream = await anthropic.messages.create({ model: 'local-opus', max_tokens: 100, messages: refused, fallbacks: [], stream: true } as any);
    for await (const _ of stream as any) void _;
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.stopReason).toBe('refusal');
    expect(wire.events.find((e) => e.type === 'message_delta').delta.stop_details).toMatchObject({ type: 'refusal' });
  });
});

describe('the hold covers the whole chain', () => {
  it('a balance that covers the first model alone is refused for its chain, accepted with []', async () => {
    const body = { model: 'local-opus', max_tokens: 1000, messages: refused };
    const alone = holdFor(defaultCatalog(), anthropicMessages, { ...body, fallbacks: [] }).hold;
    const chain = holdFor(defaultCatalog(), anthropicMessages, body).hold;
    const sonnet = holdFor(defaultCatalog(), anthropicMessages, { ...body, model: 'local-sonnet', fallbacks: [] }).hold;
    const haiku = holdFor(defaultCatalog(), anthropicMessages, { ...body, model: 'local-haiku', fallbacks: [] }).hold;
    expect(chain).toBe(alone + sonnet + haiku);
    const poor = await gw.newAccount(alone + 1n, 'poor');
    const client = new Anthropic({ baseURL: gw.url, apiKey: poor.key, maxRetries: 0 });
    await expect(client.messages.create(body)).rejects.toMatchObject({ status: 402 });
    const ok = await client.messages.create({ ...body, fallbacks: [] } as any);
    expect(ok.stop_reason).toBe('refusal');
  });
});

describe('chat completions: refusal fallback', () => {
  it('non-streaming: model names the replier, hops in switchyard.attempts and the header', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'local-opus', messages: refused, max_tokens: 400 }).withResponse();
    expect(await bodyErrors('createChatCompletion', 200, data)).toEqual([]);
    expect(data.model).toBe('local-haiku');
    expect(data.choices[0].finish_reason).toBe('stop');
    expect((data as any).switchyard.attempts.map((a: any) => `${a.model}=${a.outcome}`)).toEqual(['local-opus=refusal', 'local-sonnet=refusal', 'local-haiku=ok']);
    expect(response.headers.get('x-switchyard-attempts')).toBe('local-opus=refusal, local-sonnet=refusal, local-haiku=ok');
  });

  it('streaming before and after output: a switchyard.fallback chunk marks each hop', async () => {
    const before = await openai.chat.completions.create({ model: 'local-opus', messages: refused, max_tokens: 400, stream: true });
    for await (const _ of before) void _;
    const a = await checkChatStream(await rec.last().text());
    expect(a.chunks[0].model).toBe('local-haiku');
    expect(a.chunks.filter((c) => c.switchyard?.fallback).map((c) => c.switchyard.fallback.to)).toEqual(['local-sonnet', 'local-haiku']);
    expect(a.finishReason).toBe('stop');
    expect(a.text).toContain('You said');

    const after = await openai.chat.completions.create({ model: 'local-late-refusal', messages: refused, max_tokens: 400, stream: true });
    for await (const _ of after) void _;
    const b = await checkChatStream(await rec.last().text());
    const hop = b.chunks.findIndex((c) => c.switchyard?.fallback);
    expect(b.chunks.slice(0, hop).map((c) => c.choices[0].delta.content ?? '').join('')).toBe(LATE_REFUSAL_PREFIX);
    expect(b.chunks[hop].switchyard.fallback).toMatchObject({
      from: 'local-late-refusal',
      to: 'local-haiku',
      message: 'local-late-refusal refused: The local model refused this request (refusal test trigger). local-haiku answers instead.',
    });
    // One content string for both models: the continuation starts after a blank line.
    expect(b.text).toMatch(new RegExp(`^${LATE_REFUSAL_PREFIX}\\n\\nYou said: "`));
    expect(b.chunks.at(-1).model).toBe('local-haiku');
    expect(b.finishReason).toBe('stop');
  });

  it('[] disables fallbacks: finish_reason content_filter, streamed or not', async () => {
    const data = await openai.chat.completions.create({ model: 'local-opus', messages: refused, max_tokens: 100, fallbacks: [] } as any);
    expect(data.choices[0].finish_reason).toBe('content_filter');
    expect(data.choices[0].message.refusal).toBeTruthy();
    const stream = await openai.chat.completions.create({ model: 'local-late-refusal', messages: refused, max_tokens: 100, stream: true, fallbacks: [] } as any);
    for await (const _ of stream as any) void _;
    const wire = await checkChatStream(await rec.last().text());
    expect(wire.finishReason).toBe('content_filter');
    expect(wire.chunks.some((c) => c.switchyard?.fallback)).toBe(false);
  });
});

describe('responses: refusal fallback', () => {
  it('non-streaming and streaming name the replier and list the attempts', async () => {
    const res = await post(gw, '/v1/responses', { model: 'local-opus', input: `Please. ${TRIGGER}`, max_output_tokens: 400 });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('local-haiku');
    expect(res.body.status).toBe('completed');
    expect(res.body.switchyard.attempts.map((a: any) => a.outcome)).toEqual(['refusal', 'refusal', 'ok']);

    const streamed = await post(gw, '/v1/responses', { model: 'local-late-refusal', input: `Please. ${TRIGGER}`, max_output_tokens: 400, stream: true });
    const events = await checkResponsesStream(streamed.text);
    const done = events.at(-1);
    expect(done.type).toBe('response.completed');
    expect(done.response.model).toBe('local-haiku');
    expect(done.response.switchyard.attempts.map((a: any) => a.model)).toEqual(['local-late-refusal', 'local-haiku']);
  });
});

describe('fallbacks: validation before anything runs', () => {
  it('an unknown model in the array is a 400 and places no hold', async () => {
    const before = (await gw.ledger.ledgerEntries(gw.accountId, 500)).length;
    const usage = (await gw.ledger.usageRecords(gw.accountId, 500)).length;
    for (const [path, body] of [
      ['/v1/chat/completions', { model: 'local-opus', messages: refused, fallbacks: ['local-haiku', 'no-such-model'] }],
      ['/v1/messages', { model: 'local-opus', max_tokens: 10, messages: refused, fallbacks: [{ model: 'no-such-model' }] }],
      ['/v1/responses', { model: 'local-opus', input: 'hi', fallbacks: ['no-such-model'] }],
    ] as const) {
      const res = await post(gw, path, body);
      expect(res.status, path).toBe(400);
      expect(JSON.stringify(res.body)).toContain('no-such-model');
    }
    expect((await gw.ledger.ledgerEntries(gw.accountId, 500)).length).toBe(before);
    expect((await gw.ledger.usageRecords(gw.accountId, 500)).length).toBe(usage);
  });
});

describe('fast variant', () => {
  it('fast: true and speed: "fast" route local-sonnet to local-sonnet-fast, billed at its price', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'local-sonnet', messages: userTurn('Hi'), max_tokens: 20, fast: true } as any).withResponse();
    expect((data as any).switchyard.served_variant).toBe('fast');
    expect(data.model).toBe('local-sonnet-fast');
    expect(response.headers.get('x-switchyard-variant')).toBe('fast');
    const [line] = await capturesOf(gw, response.headers.get('x-request-id')!, 1);
    expect(line.model).toBe('local-sonnet-fast');
    expect(line.cost).toBe(priced(line, price('local-sonnet-fast')));

    const { response: r2 } = await anthropic.messages.create({ model: 'local-sonnet', max_tokens: 20, messages: userTurn('Hi'), speed: 'fast' } as any).withResponse();
    expect(r2.headers.get('x-switchyard-variant')).toBe('fast');
    expect(r2.headers.get('x-switchyard-model')).toBe('local-sonnet-fast');
  });

  it('a streamed Responses answer names the variant that served', async () => {
    const res = await post(gw, '/v1/responses', { model: 'local-sonnet', input: 'Hi', max_output_tokens: 20, fast: true, stream: true });
    const done = (await checkResponsesStream(res.text)).at(-1);
    expect(done.response.switchyard.served_variant).toBe('fast');
    expect(res.headers.get('x-switchyard-variant')).toBe('fast');
  });

  it('a model without a variant ignores the flag', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'local-haiku', messages: userTurn('Hi'), max_tokens: 20, fast: true } as any).withResponse();
    expect(data.model).toBe('local-haiku');
    expect((data as any).switchyard.served_variant).toBe('standard');
    expect(response.headers.get('x-switchyard-variant')).toBe('standard');
  });
});

describe('ceiling limits of the model', () => {
  it('max_tokens above the model limit is served at the limit, with a warning, on both protocols', async () => {
    const chat = await post(gw, '/v1/chat/completions', { model: 'local-haiku', messages: userTurn('Hi'), max_tokens: 40_000 });
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-switchyard-warnings')).toBe('max_tokens 40000 lowered to 32000, the maximum output of model local-haiku');
    const msg = await post(gw, '/v1/messages', { model: 'local-haiku', messages: userTurn('Hi'), max_tokens: 40_000 });
    expect(msg.status).toBe(200);
    expect(msg.headers.get('x-switchyard-warnings')).toBe('max_tokens 40000 lowered to 32000, the maximum output of model local-haiku');
  });

  it("a later candidate's warning, noted after the headers went out, travels in the stream on every protocol", async () => {
    // local-late-refusal thinks and refuses after some output; local-haiku, next, does not reason.
    const warning = 'reasoning ignored: local-haiku does not reason (capabilities.reasoning in the catalog)';
    const base = { model: 'local-late-refusal', stream: true };
    const chat = await post(gw, '/v1/chat/completions', { ...base, messages: refused, max_tokens: 3000, reasoning_effort: 'low' });
    expect(chat.headers.get('x-switchyard-warnings')).toBeNull();
    const chunks = (await checkChatStream(chat.text)).chunks;
    expect(chunks.filter((c) => c.switchyard?.warning).map((c) => c.switchyard.warning)).toEqual([warning]);
    const msg = await post(gw, '/v1/messages', { ...base, messages: refused, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 } });
    const delta = (await checkMessagesStream(msg.text)).events.find((e) => e.type === 'message_delta');
    expect(delta.switchyard).toEqual({ warnings: [warning] });
    const res = await post(gw, '/v1/responses', { ...base, input: `Please answer this. ${TRIGGER}`, max_output_tokens: 3000, reasoning: { effort: 'low' } });
    const done = (await checkResponsesStream(res.text)).at(-1);
    expect(done.response.switchyard.attempts.map((a: any) => a.outcome)).toEqual(['refusal', 'ok']);
    expect(done.response.switchyard.warnings).toEqual([warning]);
  });
});
