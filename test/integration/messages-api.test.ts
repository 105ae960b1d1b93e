/**
 * /v1/messages end to end through the official `@anthropic-ai/sdk`: answers, streams (their
 * event order checked against the interface spec), thinking, the output ceiling and its default,
 * the request shapes real clients send (system turns, cache_control, metadata, beta calls).
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHold } from '../../src/ledger/index.js';
import { REFUSAL_TRIGGER } from '../../src/providers/local/index.js';
import { countTokens } from '../../src/util/tokenizer.js';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, checkMessagesStream, recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1) });
});
afterAll(async () => gw?.close());

function client(key = gw.key) {
  const rec = recordingFetch();
  return { an: new Anthropic({ baseURL: gw.url, apiKey: key, fetch: rec.fetch, maxRetries: 0 }), rec };
}

const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello there, gateway' }];
const textOf = (m: Anthropic.Message) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');

describe('messages: answers', () => {
  it('answers without streaming, with a body that matches the spec and both request-id headers', async () => {
    const { an, rec } = client();
    const msg = await an.messages.create({ model: 'local-haiku', max_tokens: 1000, messages: hello });
    expect(await bodyErrors('createMessage', 200, msg)).toEqual([]);
    expect(msg.type).toBe('message');
    expect(msg.model).toBe('local-haiku');
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.content).toHaveLength(1);
    expect(textOf(msg)).toContain('Hello there, gateway');
    expect(msg.usage.output_tokens).toBe(countTokens(textOf(msg)));
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    const headers = rec.last().headers;
    expect(headers.get('x-request-id')).toMatch(/^req_/);
    expect(headers.get('request-id')).toBe(headers.get('x-request-id'));
  });

  it('streams message_start (with input usage), ping, one text block, message_delta, message_stop', async () => {
    const { an, rec } = client();
    const whole = await an.messages.create({ model: 'local-haiku', max_tokens: 1000, messages: hello });
    const final = await an.messages.stream({ model: 'local-haiku', max_tokens: 1000, messages: hello }).finalMessage();
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.events.map((e) => e.type).filter((t) => t !== 'content_block_delta')).toEqual([
      'message_start', 'ping', 'content_block_start', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    expect(wire.startUsage.input_tokens).toBe(whole.usage.input_tokens);
    expect(wire.stopReason).toBe('end_turn');
    // The local model speaks of the conversation, streaming included, so the streamed answer is its own.
    expect(wire.blocks).toEqual(final.content);
    expect(wire.usage.output_tokens).toBe(final.usage.output_tokens);
    expect(final.usage.output_tokens).toBe(countTokens(textOf(final)));
    expect(rec.last().headers.get('request-id')).toMatch(/^req_/);
  });

  it('accepts a system turn inside messages and treats it as the system prompt', async () => {
    const { an } = client();
    const messages = [{ role: 'system', content: 'Answer like a pirate' }, ...hello] as unknown as Anthropic.MessageParam[];
    const msg = await an.messages.create({ model: 'local-haiku', max_tokens: 1000, messages });
    expect(textOf(msg)).toContain('I am following the system prompt ("Answer like a pirate")');
    const viaSystem = await an.messages.create({ model: 'local-haiku', max_tokens: 1000, system: 'Answer like a pirate', messages: hello });
    expect(textOf(msg)).toBe(textOf(viaSystem));
  });

  it('accepts cache_control, metadata, output_config and context_management', async () => {
    const { an } = client();
    const msg = await an.messages.create({
      model: 'local-haiku',
      max_tokens: 1000,
      system: [{ type: 'text', text: 'Be brief', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there, gateway', cache_control: { type: 'ephemeral', ttl: '5m' } }] }],
      metadata: { user_id: 'user-123' },
      output_config: { effort: 'low' },
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
    } as any);
    expect(msg.stop_reason).toBe('end_turn');
    expect(textOf(msg)).toContain('Hello there, gateway');
  });

  it('accepts a base64 image block', async () => {
    const { an } = client();
    const data = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const msg = await an.messages.create({
      model: 'local-haiku',
      max_tokens: 1000,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] }],
    });
    expect(textOf(msg)).toContain('You sent an image');
  });

  it('serves the SDK beta calls, ?beta=true (older SDKs send it) and the vendor-version header', async () => {
    const { an, rec } = client();
    const beta = await an.beta.messages.create({ model: 'local-haiku', max_tokens: 1000, messages: hello, betas: ['context-management-2025-06-27'] });
    expect(beta.stop_reason).toBe('end_turn');
    expect(rec.last().status).toBe(200);
    for (const [path, headers] of [
      ['/v1/messages?beta=true', { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-management-2025-06-27' }],
      ['/v1/messages', { 'vendor-version': '2023-06-01' }],
    ] as const) {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': gw.key, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'local-haiku', max_tokens: 50, messages: hello }),
      });
      expect(res.status, path).toBe(200);
      expect(await bodyErrors('createMessage', 200, await res.json())).toEqual([]);
    }
  });
});

describe('messages: thinking', () => {
  const thinking = { type: 'enabled', budget_tokens: 1024 } as const;

  it('puts a signed thinking block before the text block', async () => {
    const { an } = client();
    const msg = await an.messages.create({ model: 'local-sonnet', max_tokens: 4000, thinking, messages: hello });
    expect(await bodyErrors('createMessage', 200, msg)).toEqual([]);
    expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const block = msg.content[0] as Anthropic.ThinkingBlock;
    expect(block.thinking.length).toBeGreaterThan(20);
    expect(block.signature.length).toBeGreaterThan(10);
    expect(msg.usage.output_tokens).toBe(countTokens(block.thinking) + countTokens(textOf(msg)));
  });

  it('streams thinking_delta and signature_delta in a thinking block ahead of the text block', async () => {
    const { an, rec } = client();
    const final = await an.messages.stream({ model: 'local-sonnet', max_tokens: 4000, thinking, messages: hello }).finalMessage();
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.blocks.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(wire.events.some((e) => e.delta?.type === 'signature_delta')).toBe(true);
    expect(wire.blocks).toEqual(final.content);
    expect(wire.usage.output_tokens).toBe(final.usage.output_tokens);
  });

  it('takes its thinking back in the next turn, and refuses a block whose text was changed (400, nothing billed)', async () => {
    const { an } = client();
    const first = await an.messages.create({ model: 'local-sonnet', max_tokens: 4000, thinking, messages: hello });
    const next = (content: Anthropic.ContentBlockParam[]) =>
      an.messages.create({ model: 'local-sonnet', max_tokens: 4000, thinking, messages: [...hello, { role: 'assistant', content }, { role: 'user', content: 'And?' }] });
    await expect(next(first.content as Anthropic.ContentBlockParam[])).resolves.toMatchObject({ stop_reason: 'end_turn' });

    const block = first.content[0] as Anthropic.ThinkingBlock;
    const before = await gw.ledger.getAccount(gw.accountId);
    const err = await next([{ ...block, thinking: `${block.thinking}!` }, ...(first.content.slice(1) as Anthropic.ContentBlockParam[])]).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('signature') } });
    const after = await gw.ledger.getAccount(gw.accountId);
    expect(after).toMatchObject({ balance: before!.balance, held: 0n });
  });
});

describe('messages: the output ceiling', () => {
  it('stops at max_tokens with stop_reason max_tokens and exactly max_tokens output tokens', async () => {
    const { an } = client();
    const msg = await an.messages.create({ model: 'local-haiku', max_tokens: 6, messages: hello });
    expect(msg.stop_reason).toBe('max_tokens');
    expect(msg.usage.output_tokens).toBe(6);
    expect(countTokens(textOf(msg))).toBe(6);
  });

  it('cuts a thinking stream at the ceiling, closing the open block, with thinking and text counted together', async () => {
    const { an, rec } = client();
    const thinking = { type: 'enabled', budget_tokens: 1024 } as const;
    const final = await an.messages.stream({ model: 'local-sonnet', max_tokens: 20, thinking, messages: hello }).finalMessage();
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.blocks[0].type).toBe('thinking');
    expect(wire.stopReason).toBe('max_tokens');
    expect(wire.usage.output_tokens).toBe(20);
    expect(wire.blocks.reduce((n, b) => n + countTokens(b.type === 'thinking' ? b.thinking : b.text), 0)).toBe(20);
    expect(final.stop_reason).toBe('max_tokens');
  });

  it('defaults max_tokens to 4096: the hold needs exactly 4096 output tokens of balance', async () => {
    const body = JSON.stringify({ model: 'local-haiku', messages: hello });
    const post = (key: string) =>
      fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body });
    const probe: any = await (await post(gw.key)).json();
    const hold = requestHold(probe.usage.input_tokens, [{ maxTokens: 4096, price: gw.gateway.catalog.models.get('local-haiku')!.price }]);
    const short = await gw.newAccount(hold - 1n);
    const refused = await post(short.key);
    expect(refused.status).toBe(402);
    expect(await bodyErrors('createMessage', 402, await refused.json())).toEqual([]);
    const exact = await gw.newAccount(hold);
    expect((await post(exact.key)).status).toBe(200);
  });
});

describe('messages: refusal', () => {
  it('a refusal (the magic string on local-sonnet, fallbacks: []) streams stop_reason refusal with no content', async () => {
    const { an, rec } = client();
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: `Please ${REFUSAL_TRIGGER}` }];
    const final = await an.messages.stream({ model: 'local-sonnet', max_tokens: 100, messages, fallbacks: [] } as any).finalMessage();
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.stopReason).toBe('refusal');
    expect(wire.blocks).toEqual([]);
    expect(final.stop_reason).toBe('refusal');
    const whole = await an.messages.create({ model: 'local-sonnet', max_tokens: 100, messages, fallbacks: [] } as any);
    expect(whole.stop_reason).toBe('refusal');
    expect(await bodyErrors('createMessage', 200, whole)).toEqual([]);
  });
});
