/**
 * The hard output ceiling against upstreams that ignore max_tokens (fake upstream
 * `ignoreMaxTokens`), on every client protocol, and the ceiling against the model's maximum:
 * clamped to a configured one, passed through as asked when none is configured.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { countTokens } from '../../src/util/tokenizer.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, checkChatStream, checkMessagesStream, recordingFetch } from '../support/stream-checks.js';
import { capturesOf, checkResponsesStream, post, userTurn } from './routing-support.js';

const RUNAWAY = 'words:400?ignoreMaxTokens';
const CEILING = 25;

let fake: FakeUpstream;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;
const rec = recordingFetch();

beforeAll(async () => {
  fake = await startFakeUpstream();
  const m = (id: string, provider: string, upstream: string, extra: Record<string, unknown> = {}) => ({
    id, provider, upstream_model: upstream, price: { input: '1', output: '4' }, ...extra,
  });
  const catalog = fakeCatalog(fake, {
    models: [
      m('runaway-openai', 'up-openai', RUNAWAY),
      m('runaway-anthropic', 'up-anthropic', RUNAWAY),
      m('small-openai', 'up-openai', 'words:5', { max_output_tokens: 2000 }),
      m('small-anthropic', 'up-anthropic', 'words:5', { max_output_tokens: 3000 }),
      // No max_output_tokens: the gateway knows no maximum; the fake upstream's model allows 16384.
      m('open-anthropic', 'up-anthropic', 'words:5?maxOutputTokens=16384'),
      m('open-openai', 'up-openai', 'words:5?maxOutputTokens=16384'),
    ],
  });
  gw = await startTestGateway({ catalog });
  // A set timeout lets the SDK send Claude Code's 32000 unstreamed (it refuses a guessed long call).
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0, timeout: 60_000 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** Billing never exceeds the ceiling: output tokens <= max_tokens, cost <= input + price x max_tokens. */
async function expectBilledWithinCeiling(requestId: string) {
  const [line] = await capturesOf(gw, requestId, 1);
  expect(line.tokens!.output).toBe(BigInt(CEILING));
  expect(line.cost).toBe(line.tokens!.inputNoCache * 1000n + BigInt(CEILING) * 4000n);
}

describe('the gateway ends generation at max_tokens when the upstream does not', () => {
  it('chat, streaming and not: exactly max_tokens tokens, finish_reason length', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'runaway-openai', messages: userTurn('Go'), max_tokens: CEILING }).withResponse();
    expect(await bodyErrors('createChatCompletion', 200, data)).toEqual([]);
    expect(data.choices[0].finish_reason).toBe('length');
    expect(countTokens(data.choices[0].message.content!)).toBe(CEILING);
    expect(data.usage!.completion_tokens).toBe(CEILING);
    await expectBilledWithinCeiling(response.headers.get('x-request-id')!);

    const stream = await openai.chat.completions.create({ model: 'runaway-openai', messages: userTurn('Go'), max_tokens: CEILING, stream: true, stream_options: { include_usage: true } });
    for await (const _ of stream) void _;
    const wire = await checkChatStream(await rec.last().text(), { includeUsage: true });
    expect(wire.finishReason).toBe('length');
    expect(countTokens(wire.text)).toBe(CEILING);
    expect(wire.usage.completion_tokens).toBe(CEILING);
    await expectBilledWithinCeiling(rec.last().headers.get('x-request-id')!);
  });

  it('messages, streaming and not: stop_reason max_tokens, usage at the ceiling', async () => {
    const { data: msg, response } = await anthropic.messages.create({ model: 'runaway-anthropic', max_tokens: CEILING, messages: userTurn('Go') }).withResponse();
    expect(await bodyErrors('createMessage', 200, msg)).toEqual([]);
    expect(msg.stop_reason).toBe('max_tokens');
    expect(countTokens((msg.content[0] as any).text)).toBe(CEILING);
    expect(msg.usage.output_tokens).toBe(CEILING);
    await expectBilledWithinCeiling(response.headers.get('x-request-id')!);

    const stream = await anthropic.messages.create({ model: 'runaway-openai', max_tokens: CEILING, messages: userTurn('Go'), stream: true });
    for await (const _ of stream) void _;
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.stopReason).toBe('max_tokens');
    expect(countTokens(wire.blocks[0].text)).toBe(CEILING);
    expect(wire.usage.output_tokens).toBe(CEILING);
    await expectBilledWithinCeiling(rec.last().headers.get('x-request-id')!);
  });

  it('responses, streaming: incomplete at max_output_tokens', async () => {
    const res = await post(gw, '/v1/responses', { model: 'runaway-anthropic', input: 'Go', max_output_tokens: CEILING, stream: true });
    const events = await checkResponsesStream(res.text);
    const done = events.at(-1);
    expect(done.type).toBe('response.incomplete');
    expect(done.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(done.response.usage.output_tokens).toBe(CEILING);
    expect(countTokens(done.response.output[0].content[0].text)).toBe(CEILING);
    await expectBilledWithinCeiling(res.requestId);
  });
});

describe('the ceiling against the model\'s maximum', () => {
  // The hold for the clamped ceiling (2000 or 3000 output tokens at $4 per million, plus the
  // prompt) fits this balance; one for the asked 32000 (Claude Code's default) would not.
  const BALANCE = 20_000_000n;

  it('a ceiling above a configured maximum is clamped to it, said in x-switchyard-warnings, and held on the clamped value', async () => {
    const poor = await gw.newAccount(BALANCE);
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: poor.key, maxRetries: 0 });
    const an = new Anthropic({ baseURL: gw.url, apiKey: poor.key, maxRetries: 0, timeout: 60_000 });

    const chat = await oa.chat.completions.create({ model: 'small-openai', messages: userTurn('Hi'), max_completion_tokens: 32_000 }).withResponse();
    expect(chat.data.choices[0].finish_reason).toBe('stop');
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(2000);
    expect(chat.response.headers.get('x-switchyard-warnings')).toBe('max_completion_tokens 32000 lowered to 2000, the maximum output of model small-openai');

    // Each request's settle returns its hold before the next is placed: the balance covers one hold at a time.
    await gw.ledger.settled();
    const msg = await an.messages.create({ model: 'small-anthropic', max_tokens: 32_000, messages: userTurn('Hi') }).withResponse();
    expect(msg.data.stop_reason).toBe('end_turn');
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(3000);
    expect(msg.response.headers.get('x-switchyard-warnings')).toBe('max_tokens 32000 lowered to 3000, the maximum output of model small-anthropic');

    await gw.ledger.settled();
    const streamed = await an.messages.create({ model: 'small-anthropic', max_tokens: 32_000, messages: userTurn('Hi'), stream: true }).withResponse();
    for await (const _ of streamed.data) void _;
    expect(streamed.response.headers.get('x-switchyard-warnings')).toContain('max_tokens 32000 lowered to 3000');

    await gw.ledger.settled();
    const resp = await oa.responses.create({ model: 'small-openai', input: 'Hi', max_output_tokens: 32_000 }).withResponse();
    expect(resp.data.status).toBe('completed');
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(2000);
    expect(resp.response.headers.get('x-switchyard-warnings')).toContain('max_output_tokens 32000 lowered to 2000');

    // The same ceiling on a model without a maximum is held as asked, which this balance cannot afford.
    await gw.ledger.settled();
    await expect(an.messages.create({ model: 'open-anthropic', max_tokens: 32_000, messages: userTurn('Hi') })).rejects.toMatchObject({ status: 402 });
  });

  it('a model without a configured maximum gets the client\'s ceiling as asked, and the upstream\'s refusal in the caller\'s shape', async () => {
    const within = await anthropic.messages.create({ model: 'open-anthropic', max_tokens: 16_000, messages: userTurn('Hi') }).withResponse();
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(16_000);
    expect(within.response.headers.get('x-switchyard-warnings')).toBeNull();

    // Claude Code's default against an Anthropic and an OpenAI upstream whose model allows 16384.
    for (const model of ['open-anthropic', 'open-openai']) {
      const err = await anthropic.messages.create({ model, max_tokens: 32_000, messages: userTurn('Hi') }).catch((e) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(32_000);
      expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/32000/) } });
      expect(err.error.error.message).not.toMatch(/greater than the maximum of 16384 output tokens for model/);
    }
    const chatErr = await openai.chat.completions.create({ model: 'open-openai', messages: userTurn('Hi'), max_tokens: 32_000 }).catch((e) => e);
    expect(chatErr).toBeInstanceOf(OpenAI.BadRequestError);
    expect(chatErr.error.message).toContain('supports at most 16384 completion tokens');
  });

  it('the omitted defaults (16384 chat, 4096 messages) are lowered to a configured maximum, without a warning', async () => {
    const chat = await post(gw, '/v1/chat/completions', { model: 'small-openai', messages: userTurn('Hi') });
    expect(chat.status).toBe(200);
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(2000);
    expect(chat.headers.get('x-switchyard-warnings')).toBeNull();
    expect((await post(gw, '/v1/messages', { model: 'small-anthropic', messages: userTurn('Hi') })).status).toBe(200);
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(3000);
    expect((await post(gw, '/v1/messages', { model: 'open-anthropic', messages: userTurn('Hi') })).status).toBe(200);
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(4096);
    expect((await post(gw, '/v1/chat/completions', { model: 'open-openai', messages: userTurn('Hi') })).status).toBe(200);
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(16384);
  });
});
