/**
 * A stream that outlives the hold's TTL: the pipeline's heartbeat keeps the hold pending, so the
 * reaper (running every 100 ms here) does not free it and the stream is settled and billed.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ localRate: 40, holdTtlMs: 600, reaperIntervalMs: 100 });
});
afterAll(async () => gw?.close());

describe('a stream longer than the hold TTL', () => {
  it('keeps its hold alive and is billed when it ends', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const startedAt = Date.now();
    const stream = await client.chat.completions.create({
      model: 'local-haiku',
      max_tokens: 80,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Tell me a long story about switchyards.' }],
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(Date.now() - startedAt).toBeGreaterThan(3 * 600); // several TTLs went by
    const [record] = await gw.ledger.usageRecords(gw.accountId, 1);
    expect(record.status).toBe('ok');
    expect(Number(record.tokens.output)).toBe(usage!.completion_tokens);
    expect(record.cost).toBeGreaterThan(0n);
    const account = await gw.ledger.getAccount(gw.accountId);
    expect(account!.held).toBe(0n);
    expect((await gw.ledger.balanceCheck()).ok).toBe(true);
  });
});
