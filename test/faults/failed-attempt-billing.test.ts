/**
 * A client that receives an error and no content pays nothing for the output of the failed
 * attempt (it never received it); the tokens stay on its usage record. A streaming client that
 * received part of the answer pays for what it received, as before.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startFakeGateway, type FakeGateway } from '../support/gateway.js';
import { post, sampleBody } from '../integration/cross-support.js';

let started: FakeGateway;
beforeAll(async () => {
  started = await startFakeGateway((f) => ({ catalog: fakeCatalog(f, { maxRetries: 0 }) }));
});
afterAll(async () => started?.close());

/** $1 per million input tokens (see fake-catalog.ts): 1,000 nanodollars per token. */
const INPUT_ND_PER_TOKEN = 1_000n;

async function usageRow(requestId: string) {
  const { rows } = await sql<{ cost: bigint; input: bigint; output: bigint; status: string }>`
    SELECT cost, input_no_cache + input_cache_read + input_cache_write AS input, output_tokens AS output, status
    FROM usage_records WHERE request_id = ${requestId}`.execute(started.gw.ledger.db);
  return rows[0];
}

describe('an upstream failing after it produced output', () => {
  it('non-streamed: the client gets the error and pays for the input only; the output tokens are recorded', async () => {
    const { fake, gw } = started;
    fake.reset();
    // A ceiling above 21,333 tokens streams upstream even for a non-streamed client, so the failed
    // attempt has produced output before its connection is reset.
    fake.setScenario({ words: 60, resetAfterEvents: 12 });
    const a = await post(gw.url, gw.key, 'chat', { ...sampleBody('chat', 'up-openai', false), max_tokens: 30_000 });
    expect(a.status).toBeGreaterThanOrEqual(500);
    const requestId = a.headers.get('x-request-id')!;
    await gw.ledger.settled();
    const row = await usageRow(requestId);
    console.log(`non-streamed, failed after output: status ${a.status}, usage row ${row.input} in / ${row.output} out, charged ${row.cost} nd (input only: ${row.input * INPUT_ND_PER_TOKEN})`);
    expect(row.output).toBeGreaterThan(0n);
    expect(row.cost).toBe(row.input * INPUT_ND_PER_TOKEN);
  });

  it('streamed: the client received part of the answer and pays for it', async () => {
    const { fake, gw } = started;
    fake.reset();
    fake.setScenario({ words: 60, resetAfterEvents: 12 });
    const a = await post(gw.url, gw.key, 'chat', { ...sampleBody('chat', 'up-openai', true), max_tokens: 30_000 });
    expect(a.status).toBe(200);
    expect(a.text).toContain('"error"');
    const requestId = a.headers.get('x-request-id')!;
    await gw.ledger.settled();
    const row = await usageRow(requestId);
    expect(row.output).toBeGreaterThan(0n);
    expect(row.cost).toBeGreaterThan(row.input * INPUT_ND_PER_TOKEN);
  });
});
