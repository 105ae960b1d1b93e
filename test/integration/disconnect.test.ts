/**
 * A client that goes away mid-stream stops generation at once and pays only for what was
 * produced (interface spec, "Cancelled stream"). The local models are paced at 50 tokens/s and
 * asked to think, so a full answer is hundreds of tokens and several seconds long: if generation
 * went on after the disconnect, the usage record would show far more output than the client got.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundUpToNanos, type UsageRecord } from '../../src/ledger/index.js';
import { countTokens } from '../../src/util/tokenizer.js';
import { dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1), localRate: 50 });
});
afterAll(async () => gw?.close());

/** Bursts after a late timer (the pacer catches up) may put a few more tokens out than the client read. */
const SLACK = 15;

async function settled(accountId: string, requestId: string): Promise<UsageRecord> {
  for (let i = 0; i < 200; i++) {
    const record = (await gw.ledger.usageRecords(accountId)).find((r) => r.requestId === requestId);
    if (record) return record;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no usage record for ${requestId}`);
}

async function expectBilledForWhatWasStreamed(account: { accountId: string }, requestId: string, received: string, start: bigint) {
  const record = await settled(account.accountId, requestId);
  expect(record.status).toBe('cancelled');
  const output = Number(record.tokens.output);
  const got = countTokens(received);
  expect(output).toBeGreaterThanOrEqual(got);
  expect(output).toBeLessThanOrEqual(got + SLACK);
  const price = gw.gateway.catalog.models.get('local-sonnet')!.price;
  expect(record.cost).toBe(roundUpToNanos(record.tokens.inputNoCache * price.input + record.tokens.output * price.output));
  // The hold is gone: the balance went down by the cost and nothing stays held.
  const after = (await gw.ledger.getAccount(account.accountId))!;
  expect(after.held).toBe(0n);
  expect(after.balance).toBe(start - record.cost);
  const capture = (await gw.ledger.ledgerEntries(account.accountId)).find((e) => e.requestId === requestId);
  expect(capture?.amount).toBe(-record.cost);
  return record;
}

const START = 100_000_000_000n;
const prompt = 'Tell me about disconnects';

describe('client disconnect mid-stream', () => {
  it('chat: breaking out of the SDK stream cancels the run and bills the streamed tokens', async () => {
    const account = await gw.newAccount(START);
    const rec = recordingFetch();
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: account.key, fetch: rec.fetch, maxRetries: 0 });
    const stream = await oa.chat.completions.create({ model: 'local-sonnet', stream: true, thinking: true, messages: [{ role: 'user', content: prompt }] } as any);
    let received = '';
    let chunks = 0;
    for await (const chunk of stream as any) {
      const delta = chunk.choices[0]?.delta ?? {};
      received += (delta.reasoning_content ?? '') + (delta.content ?? '');
      if (++chunks === 8) break; // the SDK aborts the request
    }
    const requestId = rec.last().headers.get('x-request-id')!;
    const record = await expectBilledForWhatWasStreamed(account, requestId, received, START);
    expect(record.tokens.inputNoCache).toBeGreaterThan(0n);
  });

  it('messages: aborting the SDK stream cancels the run and bills the streamed tokens', async () => {
    const account = await gw.newAccount(START);
    const rec = recordingFetch();
    const an = new Anthropic({ baseURL: gw.url, apiKey: account.key, fetch: rec.fetch, maxRetries: 0 });
    const stream = an.messages.stream({
      model: 'local-sonnet',
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 4000 },
      messages: [{ role: 'user', content: prompt }],
    });
    let received = '';
    let deltas = 0;
    stream.on('streamEvent', (ev) => {
      if (ev.type !== 'content_block_delta') return;
      received += ev.delta.type === 'thinking_delta' ? ev.delta.thinking : ev.delta.type === 'text_delta' ? ev.delta.text : '';
      if (++deltas === 6) stream.abort();
    });
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    const requestId = rec.last().headers.get('request-id')!;
    await expectBilledForWhatWasStreamed(account, requestId, received, START);
  });

  it('a finished stream of the same request is billed in full, as status ok (the contrast)', async () => {
    const account = await gw.newAccount(START);
    const rec = recordingFetch();
    const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: account.key, fetch: rec.fetch, maxRetries: 0 });
    const stream = await oa.chat.completions.create({ model: 'local-sonnet', stream: true, max_tokens: 40, messages: [{ role: 'user', content: prompt }] });
    let received = '';
    for await (const chunk of stream) received += chunk.choices[0]?.delta?.content ?? '';
    const record = await settled(account.accountId, rec.last().headers.get('x-request-id')!);
    expect(record.status).toBe('ok');
    expect(Number(record.tokens.output)).toBe(countTokens(received));
    expect(Number(record.tokens.output)).toBe(40);
  });
});
