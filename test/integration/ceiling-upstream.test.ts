/**
 * The hard output ceiling against upstreams that ignore max_tokens (fake upstream
 * `ignoreMaxTokens`), on every client protocol, and the model limits on the ceiling.
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

describe('the ceiling against the model limit', () => {
  it('max_tokens above the limit is a 400 naming the limit', async () => {
    const res = await post(gw, '/v1/chat/completions', { model: 'small-openai', messages: userTurn('Hi'), max_tokens: 2001 });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('max_tokens');
    expect(res.body.error.message).toContain('2000');
  });

  it('the omitted defaults (16384 chat, 4096 messages) are lowered to the limit', async () => {
    expect((await post(gw, '/v1/chat/completions', { model: 'small-openai', messages: userTurn('Hi') })).status).toBe(200);
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(2000);
    expect((await post(gw, '/v1/messages', { model: 'small-anthropic', messages: userTurn('Hi') })).status).toBe(200);
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(3000);
    expect((await post(gw, '/v1/messages', { model: 'up-anthropic', messages: userTurn('Hi') })).status).toBe(200);
    expect((fake.requests.at(-1)!.body as any).max_tokens).toBe(4096);
  });
});
