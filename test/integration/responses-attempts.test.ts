/**
 * One attempt record end to end: a streamed Responses request whose first deployment fails before
 * any output (a hop to the model's other deployment, which no `fallback` event marks) and whose
 * second deployment fails mid-stream. The `response.failed` event reports exactly the attempts of
 * the usage record, deployments included, and begins with the hops `x-switchyard-attempts` showed
 * when the stream started: the encoder reports the pipeline's record and builds none of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { post, sampleBody } from './cross-support.js';

let fake: FakeUpstream;
let gw: TestGateway;

const price = { input: '1', output: '4' };

beforeAll(async () => {
  fake = await startFakeUpstream({ scenario: { words: 3 } });
  const catalog = fakeCatalog(fake, {
    maxRetries: 0,
    models: [
      {
        id: 'hop-then-fail',
        price,
        deployments: [
          // Picked first (weight): a 529 before any output moves the request to the other deployment.
          { name: 'busy', provider: 'up-openai', upstream_model: 'status:529?retryAfter=30', weight: 1e6 },
          // Answers, then its connection is reset mid-stream: no deployment or model left.
          { name: 'spare', provider: 'up-openai', upstream_model: 'words:60?resetAfterEvents=12', weight: 1 },
        ],
      },
    ],
  });
  gw = await startTestGateway({ catalog });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('a streamed Responses failure after a deployment hop', () => {
  it('reports in response.failed exactly the attempts of the usage record, which x-switchyard-attempts began', async () => {
    const answer = await post(gw.url, gw.key, 'responses', sampleBody('responses', 'hop-then-fail', true));
    expect(answer.status).toBe(200);
    const events = answer.frames.map((f) => f.data as Record<string, any>);
    expect(events.some((e) => e.type === 'response.output_text.delta')).toBe(true);
    const failed = events.at(-1)!;
    expect(failed.type).toBe('response.failed');
    const reported = failed.response.switchyard.attempts as Array<{ model: string; deployment?: string; outcome: string; reason?: string }>;

    await gw.ledger.settled();
    const requestId = answer.headers.get('x-request-id')!;
    const record = await gw.ledger.db.selectFrom('usage_records').select(['attempts', 'status']).where('request_id', '=', requestId).executeTakeFirstOrThrow();
    expect(reported).toEqual(record.attempts);
    expect(reported.map((a) => [a.deployment, a.outcome])).toEqual([
      ['hop-then-fail/busy', 'error'],
      ['hop-then-fail/spare', 'error'],
    ]);
    // The header went out with the stream's first byte: the hops up to the deployment that began to answer.
    const header = answer.headers.get('x-switchyard-attempts')!;
    expect(header).toBe('hop-then-fail/busy=error');
    expect(reported.slice(0, -1).map((a) => `${a.deployment ?? a.model}=${a.outcome}`).join(', ')).toBe(header);
  });
});
