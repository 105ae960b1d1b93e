/**
 * Issue 4 through HTTP: a client that disconnects mid-stream pays for the input in full plus what
 * the tokenizer counts over the text it was streamed (reasoning included), and the rest of the
 * hold returns; each fallback attempt is billed at its own model's price; a repeated settle
 * changes nothing; a revoked or unknown key never reaches the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOf, roundUpToNanos, type Ledger } from '../../src/ledger/index.js';
import { anthropicMessages } from '../../src/protocols/anthropic-messages/index.js';
import { openaiChat } from '../../src/protocols/openai-chat/index.js';
import { REFUSAL_TRIGGER } from '../../src/providers/local/index.js';
import { LATE_REFUSAL_PREFIX } from '../../src/providers/local/plan-output.js';
import { countTokens } from '../../src/util/tokenizer.js';
import { dbTargets, localCatalog, M, setModelPrice, startTestGateway, type TestGateway } from '../support/gateway.js';
import { holdFor, ssePayloads, waitFor } from '../ledger/http-billing.js';

/**
 * Streams paced at 5 tokens per second leave 200 ms between tokens, far more than the gateway
 * (same process) needs to see the socket close, so nothing is streamed after the client stops.
 */
function billingCatalog() {
  const catalog = localCatalog(0);
  for (const id of ['local-opus', 'local-sonnet']) {
    const m = catalog.models.get(id)!;
    m.modelOptions = { ...m.modelOptions, tokens_per_second: 5 };
  }
  // Unlike local-late-refusal's price, so each fallback attempt shows its own model's price.
  setModelPrice(catalog, 'local-haiku', { input: 3n * M, output: 15n * M, cacheRead: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6n * M });
  return catalog;
}

/** POSTs a streaming request and aborts once `enough(payloads)` holds; returns what arrived. */
async function streamThenDisconnect(url: string, headers: Record<string, string>, body: unknown, enough: (p: any[]) => boolean) {
  const ac = new AbortController();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: ac.signal });
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended before the client meant to disconnect');
    text += decoder.decode(value, { stream: true });
    // Only whole events count; a partial trailing event was not "received" yet.
    const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
    if (enough(ssePayloads(complete))) {
      ac.abort();
      return { requestId, payloads: ssePayloads(complete) };
    }
  }
}

async function usageOf(ledger: Ledger, accountId: string, requestId: string) {
  return waitFor(async () => (await ledger.usageRecords(accountId)).find((r) => r.requestId === requestId), 10_000, `usage of ${requestId}`);
}

describe.each(dbTargets)('billing of disconnects, fallbacks and keys through HTTP ($name)', (target) => {
  let gw: TestGateway;
  const catalog = billingCatalog();
  beforeAll(async () => {
    gw = await startTestGateway({ target, catalog });
  });
  afterAll(async () => gw?.close());

  it('chat: disconnect after 4 streamed tokens bills input in full plus the streamed text; the rest of the hold returns', async () => {
    const { accountId, key } = await gw.newAccount(1_000_000_000n, 'disconnect');
    const body = { model: 'local-opus', stream: true, max_tokens: 500, messages: [{ role: 'user', content: 'Tell me everything about double-entry bookkeeping.' }] };
    const { hold, inputTokens } = holdFor(catalog, openaiChat, body);
    const deltas = (p: any[]) => p.map((c) => c.choices?.[0]?.delta?.content ?? '').filter(Boolean);
    const { requestId, payloads } = await streamThenDisconnect(`${gw.url}/v1/chat/completions`, { authorization: `Bearer ${key}` }, body, (p) => deltas(p).length >= 4);
    const streamed = deltas(payloads).join('');

    const usage = await usageOf(gw.ledger, accountId, requestId);
    const price = catalog.models.get('local-opus')!.price;
    const output = countTokens(streamed);
    const expected = roundUpToNanos(BigInt(inputTokens) * price.input + BigInt(output) * price.output);
    expect(usage).toMatchObject({ status: 'cancelled', modelServed: 'local-opus', cost: expected });
    expect(usage.tokens).toMatchObject({ inputNoCache: BigInt(inputTokens), output: BigInt(output), reasoning: 0n });
    expect(expected).toBeLessThan(hold);
    expect(await gw.ledger.getAccount(accountId)).toMatchObject({ balance: 1_000_000_000n - expected, held: 0n });
    const [capture] = (await gw.ledger.ledgerEntries(accountId)).filter((e) => e.requestId === requestId);
    expect(capture).toMatchObject({ kind: 'capture', amount: -expected, cost: expected, model: 'local-opus' });
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('messages: disconnect during thinking bills the streamed thinking as output (reasoning)', async () => {
    const { accountId, key } = await gw.newAccount(1_000_000_000n, 'disconnect-thinking');
    const body = {
      model: 'local-sonnet', stream: true, max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Think hard about how holds and settlements interact.' }],
    };
    const { inputTokens } = holdFor(catalog, anthropicMessages, body, { 'anthropic-version': '2023-06-01' });
    const thinking = (p: any[]) => p.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'thinking_delta').map((e) => e.delta.thinking as string);
    const { requestId, payloads } = await streamThenDisconnect(
      `${gw.url}/v1/messages`, { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, body, (p) => thinking(p).length >= 3,
    );
    expect(payloads.some((e) => e.type === 'content_block_delta' && e.delta.type === 'text_delta')).toBe(false);
    const output = BigInt(countTokens(thinking(payloads).join('')));

    const usage = await usageOf(gw.ledger, accountId, requestId);
    const price = catalog.models.get('local-sonnet')!.price;
    expect(usage.tokens).toMatchObject({ inputNoCache: BigInt(inputTokens), output, reasoning: output });
    expect(usage.cost).toBe(roundUpToNanos(BigInt(inputTokens) * price.input + output * price.output));
    expect(await gw.ledger.getAccount(accountId)).toMatchObject({ balance: 1_000_000_000n - usage.cost, held: 0n });
  });

  it('a fallback chain bills each attempt at the price of the model that ran it', async () => {
    const { accountId, key } = await gw.newAccount(1_000_000_000n, 'fallback');
    const body = { model: 'local-late-refusal', max_tokens: 50, messages: [{ role: 'user', content: `Please help. ${REFUSAL_TRIGGER}` }] };
    const { inputTokens } = holdFor(catalog, openaiChat, body);
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const answer = (await res.json()) as any;

    const lines = (await gw.ledger.ledgerEntries(accountId)).filter((e) => e.requestId === requestId).reverse();
    expect(lines.map((l) => l.model)).toEqual(['local-late-refusal', 'local-haiku']);
    const [refused, served] = lines;
    expect(refused.tokens).toMatchObject({ inputNoCache: BigInt(inputTokens), output: BigInt(countTokens(LATE_REFUSAL_PREFIX)) });
    for (const line of lines) {
      const usage = { input: { noCache: Number(line.tokens!.inputNoCache), cacheRead: 0, cacheWrite: 0 }, output: { total: Number(line.tokens!.output), reasoning: 0 } };
      expect(line.cost).toBe(costOf(usage, catalog.models.get(line.model!)!.price));
      expect(line.amount).toBe(-line.cost!);
    }
    expect(served.tokens!.output).toBe(BigInt(answer.usage.completion_tokens) - refused.tokens!.output);
    const usage = await usageOf(gw.ledger, accountId, requestId);
    expect(usage).toMatchObject({ modelRequested: 'local-late-refusal', modelServed: 'local-haiku', status: 'ok', cost: refused.cost! + served.cost! });
    expect(usage.attempts).toEqual([
      expect.objectContaining({ model: 'local-late-refusal', outcome: 'refusal' }),
      expect.objectContaining({ model: 'local-haiku', outcome: 'ok' }),
    ]);
  });

  it('settling the same request again changes nothing', async () => {
    const { accountId, key } = await gw.newAccount(1_000_000_000n, 'twice');
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-haiku', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const before = { account: await gw.ledger.getAccount(accountId), journal: await gw.ledger.ledgerEntries(accountId), usage: await gw.ledger.usageRecords(accountId) };
    const charge = { model: 'local-haiku', usage: { input: { noCache: 1000, cacheRead: 0, cacheWrite: 0 }, output: { total: 1000, reasoning: 0 } }, cost: 123_456n };
    const record = { keyId: null, modelRequested: 'local-haiku', modelServed: 'local-haiku', attempts: [], latencyMs: 1, status: 'ok' };
    const again = await Promise.all([1, 2, 3].map(() => gw.ledger.settle({ requestId, charges: [charge], record })));
    expect(again.every((r) => !r.settled && r.captured === before.usage[0].cost)).toBe(true);
    expect(await gw.ledger.release(requestId)).toBe(false);
    expect(await gw.ledger.getAccount(accountId)).toEqual(before.account);
    expect(await gw.ledger.ledgerEntries(accountId)).toEqual(before.journal);
    expect(await gw.ledger.usageRecords(accountId)).toEqual(before.usage);
  });

  it('a revoked or unknown key never reaches the ledger', async () => {
    const { accountId, key } = await gw.newAccount(1_000_000_000n, 'revoked');
    const [record] = await gw.ledger.listKeys(accountId);
    const revoke = await fetch(`${gw.url}/admin/keys/${record.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${gw.adminKey}` } });
    expect(revoke.status).toBe(200);
    const count = async (table: 'holds' | 'usage_records' | 'journal') =>
      Number((await gw.ledger.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await Promise.all([count('holds'), count('usage_records'), count('journal')]);
    const body = JSON.stringify({ model: 'local-haiku', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const credentials: Array<Record<string, string>> = [{ authorization: `Bearer ${key}` }, { 'x-api-key': key }, { authorization: 'Bearer sk-sy-unknownunknownunknownunknownunknownunknown1' }];
    for (const headers of credentials) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe('invalid_api_key');
    }
    const messages = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body,
    });
    expect(messages.status).toBe(401);
    expect(((await messages.json()) as any).error.type).toBe('authentication_error');
    expect(await Promise.all([count('holds'), count('usage_records'), count('journal')])).toEqual(before);
    expect(await gw.ledger.getAccount(accountId)).toMatchObject({ balance: 1_000_000_000n, held: 0n });
  });
});
