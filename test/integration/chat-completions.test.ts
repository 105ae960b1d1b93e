/**
 * /v1/chat/completions end to end through the official `openai` SDK: answers, streams, the
 * output ceiling and its default, reasoning, images. Every body is validated against
 * generated/openapi.yaml and every stream's chunks and order by test/support/stream-checks.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHold } from '../../src/ledger/index.js';
import { REFUSAL_TRIGGER } from '../../src/providers/local/index.js';
import { countTokens } from '../../src/util/tokenizer.js';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, checkChatStream, recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1) });
});
afterAll(async () => gw?.close());

function client(key = gw.key) {
  const rec = recordingFetch();
  return { oa: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, fetch: rec.fetch, maxRetries: 0 }), rec };
}

const hello: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello there, gateway' }];

describe('chat completions: answers', () => {
  it('answers without streaming, with a body that matches the spec and a request id', async () => {
    const { oa, rec } = client();
    const res = await oa.chat.completions.create({ model: 'local-haiku', messages: hello });
    expect(await bodyErrors('createChatCompletion', 200, res)).toEqual([]);
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('local-haiku');
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.content).toContain('Hello there, gateway');
    expect(res.usage!.completion_tokens).toBe(countTokens(choice.message.content!));
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
    expect(rec.last().headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('streams the answer as chunks ending with [DONE], with no usage chunk unless asked', async () => {
    const { oa, rec } = client();
    const stream = await oa.chat.completions.create({ model: 'local-haiku', messages: hello, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    const wire = await checkChatStream(await rec.last().text());
    expect(wire.text).toBe(text);
    expect(text).toContain('You said: "Hello');
    // The local model speaks of the conversation, streaming included: the same request streamed again says the same.
    const again = await oa.chat.completions.create({ model: 'local-haiku', messages: hello, stream: true });
    let second = '';
    for await (const chunk of again) second += chunk.choices[0]?.delta?.content ?? '';
    expect(second).toBe(text);
    expect(wire.finishReason).toBe('stop');
    expect(rec.last().headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(rec.last().headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('sends a usage chunk after the finish with stream_options.include_usage', async () => {
    const { oa, rec } = client();
    const stream = await oa.chat.completions.create({
      model: 'local-haiku',
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    const wire = await checkChatStream(await rec.last().text(), { includeUsage: true });
    expect(usage).toEqual(wire.usage);
    expect(wire.usage.completion_tokens).toBe(countTokens(wire.text));
    expect(wire.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('accepts a base64 image as a data URL', async () => {
    const { oa } = client();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const res = await oa.chat.completions.create({
      model: 'local-haiku',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }],
    });
    expect(res.choices[0]!.message.content).toContain('You sent an image');
    expect(await bodyErrors('createChatCompletion', 200, res)).toEqual([]);
  });

  it('works with the SDK stream helper (chat.completions.stream)', async () => {
    const { oa } = client();
    const runner = oa.chat.completions.stream({ model: 'local-haiku', messages: hello });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.content).toContain('Hello there, gateway');
    expect(final.choices[0]!.finish_reason).toBe('stop');
  });
});

describe('chat completions: the output ceiling', () => {
  it('stops at max_tokens with finish_reason length and exactly max_tokens output tokens', async () => {
    const { oa } = client();
    const res = await oa.chat.completions.create({ model: 'local-haiku', messages: hello, max_tokens: 7 });
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect(res.usage!.completion_tokens).toBe(7);
    expect(countTokens(res.choices[0]!.message.content!)).toBe(7);
    expect(await bodyErrors('createChatCompletion', 200, res)).toEqual([]);
  });

  it('cuts a stream at max_completion_tokens the same way', async () => {
    const { oa, rec } = client();
    const stream = await oa.chat.completions.create({
      model: 'local-haiku',
      messages: hello,
      max_completion_tokens: 9,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _ of stream);
    const wire = await checkChatStream(await rec.last().text(), { includeUsage: true });
    expect(wire.finishReason).toBe('length');
    expect(countTokens(wire.text)).toBe(9);
    expect(wire.usage.completion_tokens).toBe(9);
  });

  it('counts reasoning and answer together against the ceiling', async () => {
    const { oa } = client();
    const res = await oa.chat.completions.create({ model: 'local-sonnet', messages: hello, max_tokens: 30, thinking: true } as any);
    const message = res.choices[0]!.message as any;
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect(res.usage!.completion_tokens).toBe(30);
    expect(countTokens(message.reasoning_content ?? '') + countTokens(message.content ?? '')).toBe(30);
  });

  it('defaults max_tokens to 16384: the hold needs exactly 16384 output tokens of balance', async () => {
    // The answer is short, so the default shows in the hold: a balance one nanodollar short of
    // (input + 16384 output tokens) is refused with 402, the exact amount is accepted.
    const { oa } = client();
    const probe = await oa.chat.completions.create({ model: 'local-haiku', messages: hello });
    const input = BigInt(probe.usage!.prompt_tokens);
    const hold = requestHold(Number(input), [{ maxTokens: 16_384, price: gw.gateway.catalog.models.get('local-haiku')!.price }]);
    const short = await gw.newAccount(hold - 1n);
    await expect(client(short.key).oa.chat.completions.create({ model: 'local-haiku', messages: hello })).rejects.toMatchObject({ status: 402 });
    const exact = await gw.newAccount(hold);
    const res = await client(exact.key).oa.chat.completions.create({ model: 'local-haiku', messages: hello });
    expect(res.choices[0]!.finish_reason).toBe('stop');
  });
});

describe('chat completions: reasoning', () => {
  it('streams reasoning_content before the answer with thinking: true', async () => {
    const { oa, rec } = client();
    const stream = await oa.chat.completions.create({ model: 'local-sonnet', messages: hello, stream: true, thinking: true } as any);
    for await (const _ of stream as any);
    const wire = await checkChatStream(await rec.last().text());
    expect(wire.reasoning.length).toBeGreaterThan(20);
    expect(wire.text).toContain('Hello there, gateway');
    expect(wire.finishReason).toBe('stop');
  });

  it('reasons with reasoning_effort, and returns reasoning_content without streaming', async () => {
    const { oa } = client();
    const res = await oa.chat.completions.create({ model: 'local-sonnet', messages: hello, reasoning_effort: 'low' });
    const message = res.choices[0]!.message as any;
    expect(message.reasoning_content.length).toBeGreaterThan(20);
    expect(message.content).toContain('Hello there, gateway');
    expect(res.usage!.completion_tokens_details!.reasoning_tokens).toBe(countTokens(message.reasoning_content));
    expect(await bodyErrors('createChatCompletion', 200, res)).toEqual([]);
  });

  it('does not reason when not asked', async () => {
    const { oa, rec } = client();
    const stream = await oa.chat.completions.create({ model: 'local-sonnet', messages: hello, stream: true });
    for await (const _ of stream);
    expect((await checkChatStream(await rec.last().text())).reasoning).toBe('');
  });
});

describe('chat completions: refusal', () => {
  it('a refusal (the magic string on local-sonnet, fallbacks: []) finishes with content_filter', async () => {
    const { oa, rec } = client();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `Please ${REFUSAL_TRIGGER}` }];
    const res = await oa.chat.completions.create({ model: 'local-sonnet', messages, fallbacks: [] } as any);
    expect(res.choices[0]!.finish_reason).toBe('content_filter');
    expect(await bodyErrors('createChatCompletion', 200, res)).toEqual([]);
    const stream = await oa.chat.completions.create({ model: 'local-sonnet', messages, fallbacks: [], stream: true } as any);
    for await (const _ of stream as any);
    expect((await checkChatStream(await rec.last().text())).finishReason).toBe('content_filter');
  });
});
