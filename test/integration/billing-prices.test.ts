/**
 * Every request billed as the provider bills it, through the real gateway and the official SDKs,
 * streamed and collected, with usage each provider scripts as it reports it: Anthropic's cache
 * writes by lifetime (5 minutes at 1.25x input, 1 hour at 2x) and web searches, Claude on Bedrock
 * Converse (`cacheDetails`), OpenAI's cached tokens and the `flex` tier that served, a Responses
 * answer's hosted web search at the `priority` tier, and a Gemini prompt above the long-context
 * threshold (the whole request at the higher tier), and output an upstream reports above the
 * request's `max_tokens`, billed whole beyond the hold. The client reads the cost as `usage.cost`
 * (and `x-switchyard-cost` on a whole answer); the journal's priced cost is the same figure.
 */
import { sql } from 'kysely';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import { bedrockCatalogDocument, TEST_AWS_CREDENTIALS, useTestAwsCredentials } from '../support/bedrock-catalog.js';
import { FAKE_KEY_ENV } from '../support/fake-catalog.js';
import { useSdkGateway, type SdkGateway } from '../support/sdk-gateway.js';
import { vertexCatalogDocument } from '../support/vertex-catalog.js';
import { responseProblems } from '../ledger/http-billing.js';

const sdk: SdkGateway = useSdkGateway(
  (fake) => {
    const doc = vertexCatalogDocument(fake, bedrockCatalogDocument(fake));
    const provider = (type: string, base_url: string) => ({ type, base_url, api_key_env: FAKE_KEY_ENV, max_retries: 0 });
    doc.providers['up-gemini'] = provider('gemini', `${fake.url}/v1beta`);
    doc.providers['up-responses'] = provider('openai-responses', `${fake.url}/v1`);
    const model = (id: string, providerId: string, upstream: string, price: object) => ({
      id,
      provider: providerId,
      upstream_model: upstream,
      price,
      context_window: 1_000_000,
      max_output_tokens: 64_000,
      capabilities: { tools: true, reasoning: true, images: true },
    });
    doc.models.push(
      // Only input and output: Claude's cache rates follow from Anthropic's documented multipliers.
      model('claude', 'up-anthropic', 'claude-sonnet-4-5', { input: '3', output: '15', server_tools: { web_search: '10' } }),
      model('bd-claude', 'up-bedrock-converse', 'anthropic.claude-sonnet-4-5-20250929-v1:0', { input: '3', output: '15' }),
      model('vx-claude', 'up-vertex-claude', 'claude-sonnet-4-5@20250929', { input: '3', output: '15', server_tools: { web_search: '10' } }),
      model('gpt', 'up-openai', 'gpt-5', { input: '1.25', output: '10', cache_read: '0.125', service_tiers: { flex: { multiplier: '0.5' } } }),
      model('resp', 'up-responses', 'gpt-5', {
        input: '1.25',
        output: '10',
        cache_read: '0.125',
        server_tools: { web_search: '10' },
        service_tiers: { priority: { input: '2.5', output: '20', cache_read: '0.25' } },
      }),
      model('pro', 'up-gemini', 'gemini-2.5-pro', {
        input: '1.25',
        output: '10',
        cache_read: '0.125',
        long_context: [{ above: 200_000, input: '2.5', output: '15', cache_read: '0.25' }],
      }),
    );
    // The holds table is read for each request's worst case (holdAmount): every hold goes to the database.
    return { catalog: buildCatalog(doc, { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'prices catalog'), exactHolds: true };
  },
  { fake: { awsCredentials: TEST_AWS_CREDENTIALS }, setup: useTestAwsCredentials },
);

/**
 * The price sheets' arithmetic, in nanodollars (a rate in USD per million tokens is that many
 * thousand nanodollars per token).
 */
const EXPECTED = {
  // 1,000 input x $3 + 20,000 cache reads x $0.30 + 3,000 5-minute writes x $3.75 + 4,000 1-hour
  // writes x $6 + 500 output x $15, per million; 2 web searches x $10 per thousand.
  claude: 1_000n * 3_000n + 20_000n * 300n + 3_000n * 3_750n + 4_000n * 6_000n + 500n * 15_000n + 2n * 10_000_000n,
  // 500 input x $3 + 10,000 cache reads x $0.30 + 4,000 5-minute writes x $3.75 + 2,000 1-hour writes x $6 + 300 output x $15.
  bd: 500n * 3_000n + 10_000n * 300n + 4_000n * 3_750n + 2_000n * 6_000n + 300n * 15_000n,
  // At flex, half of: 2,000 uncached x $1.25 + 8,000 cached x $0.125 + 2,000 output (reasoning included) x $10.
  gpt: 2_000n * 625n + 8_000n * 62_500n / 1_000n + 2_000n * 5_000n,
  // At priority: 2,000 uncached x $2.50 + 1,000 cached x $0.25 + 400 output x $20; one web search x $10 per thousand.
  resp: 2_000n * 2_500n + 1_000n * 250n + 400n * 20_000n + 10_000_000n,
  // 250,000 prompt tokens are above 200,000: all at the long-context tier. 200,000 uncached x $2.50
  // + 50,000 cached x $0.25 + 4,000 output (3,000 of them thinking) x $15.
  pro: 200_000n * 2_500n + 50_000n * 250n + 4_000n * 15_000n,
};

const usd = (nanos: bigint) => Number(nanos) / 1e9;

/**
 * The lines each request's usage record keeps: [kind, count, rate in nanodollars per token or use],
 * as the price sheets give them (the same figures EXPECTED multiplies).
 */
const LINES: Record<keyof typeof EXPECTED, Array<[string, number, number]>> = {
  claude: [['input', 1_000, 3_000], ['cache_read', 20_000, 300], ['cache_write_5m', 3_000, 3_750], ['cache_write_1h', 4_000, 6_000], ['output', 500, 15_000], ['web_search', 2, 10_000_000]],
  bd: [['input', 500, 3_000], ['cache_read', 10_000, 300], ['cache_write_5m', 4_000, 3_750], ['cache_write_1h', 2_000, 6_000], ['output', 300, 15_000]],
  // Reasoning is not priced apart from output by OpenAI or Gemini: it is in the output line.
  gpt: [['input', 2_000, 625], ['cache_read', 8_000, 62.5], ['output', 2_000, 5_000]],
  resp: [['input', 2_000, 2_500], ['cache_read', 1_000, 250], ['output', 400, 20_000], ['web_search', 1, 10_000_000]],
  pro: [['input', 200_000, 2_500], ['cache_read', 50_000, 250], ['output', 4_000, 15_000]],
};

/** A rate as the API gives it (nanodollars, exact to six decimals) in femtodollars, exactly. */
function femtodollars(rate: number): bigint {
  const text = String(rate);
  if (!/^\d+(\.\d{1,6})?$/.test(text)) throw new Error(`rate ${text} is not nanodollars to six decimals`);
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

/**
 * The request's usage record as its key reads it (`GET /v1/usage`, checked against the published
 * schema): its priced lines are the provider's, and the invoice recomputed from them (each line's
 * count x rate, summed, rounded up once) is the cost billed.
 */
async function expectBreakdown(
  requestId: string,
  cost: bigint,
  want: { model: string; lines: Array<[string, number, number]>; serviceTier?: string; above?: number; beyondHold?: bigint },
) {
  const res = await fetch(`${sdk.gw.url}/v1/usage?limit=100`, { headers: { authorization: `Bearer ${sdk.gw.key}` } });
  const body = (await res.json()) as { data: Array<Record<string, any>> };
  expect(res.status).toBe(200);
  expect(await responseProblems('listUsage', 200, body)).toEqual([]);
  const record = body.data.find((r) => r.request_id === requestId)!;
  expect(record).toMatchObject({ cost: Number(cost), beyond_hold: Number(want.beyondHold ?? 0n) });
  expect(record.pricing).toEqual([
    {
      model: want.model,
      deployment: `${want.model}/0`,
      price_source: 'config',
      service_tier: want.serviceTier ?? null,
      long_context_above: want.above ?? null,
      lines: want.lines.map(([kind, count, rate]) => ({ kind, count, rate })),
      cost: Number(cost),
    },
  ]);
  const exact = (record.pricing as Array<{ lines: Array<{ count: number; rate: number }> }>)
    .flatMap((a) => a.lines)
    .reduce((sum, l) => sum + BigInt(l.count) * femtodollars(l.rate), 0n);
  expect((exact + 999_999n) / 1_000_000n).toBe(cost);
}

/** The amount the gateway held for a request. */
async function holdAmount(requestId: string): Promise<bigint> {
  const { rows } = await sql<{ amount: bigint }>`SELECT amount FROM holds WHERE id = ${requestId}`.execute(sdk.gw.ledger.db);
  return BigInt(rows[0].amount);
}

/** The journal's priced cost of a request (its capture lines' `cost`), once settled. */
async function journalCost(requestId: string): Promise<bigint> {
  for (let i = 0; i < 100; i++) {
    const lines = (await sdk.gw.ledger.ledgerEntries(sdk.gw.accountId, 500)).filter((e) => e.requestId === requestId && e.kind === 'capture');
    if (lines.length) return lines.reduce((sum, l) => sum + (l.cost ?? 0n), 0n);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`request ${requestId} was not settled`);
}

async function chatCost(model: string, script: string, stream: boolean): Promise<{ cost: number | undefined; header: string | null; requestId: string }> {
  sdk.fake.script(script);
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello' }];
  if (stream) {
    const { data, response } = await sdk.openai.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } }).withResponse();
    let cost: number | undefined;
    for await (const chunk of data) if (chunk.usage) cost = (chunk.usage as { cost?: number }).cost;
    return { cost, header: response.headers.get('x-switchyard-cost'), requestId: response.headers.get('x-request-id')! };
  }
  const { data, response } = await sdk.openai.chat.completions.create({ model, messages }).withResponse();
  return { cost: (data.usage as { cost?: number }).cost, header: response.headers.get('x-switchyard-cost'), requestId: response.headers.get('x-request-id')! };
}

describe('billed as the provider bills it, streamed and collected', () => {
  // Loading and compiling the published document takes seconds: once, before the tests' clocks run.
  beforeAll(() => responseProblems('listUsage', 200, { data: [], has_more: false, first_id: null, last_id: null }));

  for (const stream of [true, false]) {
    const how = stream ? 'streamed' : 'collected';

    for (const [model, who] of [['claude', 'Anthropic'], ['vx-claude', 'Claude on Vertex']] as const) {
    it(`${who}: 5-minute and 1-hour cache writes at their own rates, cache reads, web searches per use (${how}, messages SDK)`, async () => {
      sdk.fake.script(stream ? 'script:anthropic-messages/stream-cache-lifetimes' : 'script:anthropic-messages/response-cache-lifetimes');
      const params = { model, max_tokens: 10_000, messages: [{ role: 'user' as const, content: 'Hello' }] };
      let usage: Record<string, unknown>;
      let response: globalThis.Response;
      if (stream) {
        const r = await sdk.anthropic.messages.create({ ...params, stream: true }).withResponse();
        response = r.response;
        usage = {};
        for await (const ev of r.data) if (ev.type === 'message_delta') usage = ev.usage as unknown as Record<string, unknown>;
        expect(response.headers.get('x-switchyard-cost')).toBeNull();
      } else {
        const r = await sdk.anthropic.messages.create(params).withResponse();
        response = r.response;
        usage = r.data.usage as unknown as Record<string, unknown>;
        expect(response.headers.get('x-switchyard-cost')).toBe('0.07175');
      }
      expect(usage).toMatchObject({
        cache_creation_input_tokens: 7_000,
        cache_creation: { ephemeral_5m_input_tokens: 3_000, ephemeral_1h_input_tokens: 4_000 },
        server_tool_use: { web_search_requests: 2 },
        cost: usd(EXPECTED.claude),
      });
      expect(await journalCost(response.headers.get('x-request-id')!)).toBe(EXPECTED.claude);
      await expectBreakdown(response.headers.get('x-request-id')!, EXPECTED.claude, { model, lines: LINES.claude });
    });
    }

    it(`Claude on Bedrock Converse: cacheDetails split by lifetime at Anthropic's multipliers (${how})`, async () => {
      const r = await chatCost('bd-claude', 'script:bedrock/converse-stream-cache-lifetimes', stream);
      expect(r.cost).toBe(usd(EXPECTED.bd));
      expect(await journalCost(r.requestId)).toBe(EXPECTED.bd);
      await expectBreakdown(r.requestId, EXPECTED.bd, { model: 'bd-claude', lines: LINES.bd });
    });

    it(`OpenAI: cached tokens, billed at the flex tier the answer names (${how})`, async () => {
      const r = await chatCost('gpt', 'script:openai-chat/stream-flex-cached', stream);
      expect(r.cost).toBe(usd(EXPECTED.gpt));
      expect(r.header).toBe(stream ? null : '0.01175');
      expect(await journalCost(r.requestId)).toBe(EXPECTED.gpt);
      await expectBreakdown(r.requestId, EXPECTED.gpt, { model: 'gpt', lines: LINES.gpt, serviceTier: 'flex' });
    });

    it(`Gemini: a prompt above 200k tokens bills the whole request, thinking included, at the long-context tier (${how})`, async () => {
      const r = await chatCost('pro', 'script:google-gemini/stream-long-context', stream);
      expect(r.cost).toBe(usd(EXPECTED.pro));
      expect(await journalCost(r.requestId)).toBe(EXPECTED.pro);
      // The script reports a 250,000-token prompt for a five-word one: far above what the gateway
      // could foresee and hold, so most of the charge is beyond the hold, billed all the same.
      const hold = await holdAmount(r.requestId);
      expect(hold).toBeLessThan(EXPECTED.pro);
      await expectBreakdown(r.requestId, EXPECTED.pro, { model: 'pro', lines: LINES.pro, above: 200_000, beyondHold: EXPECTED.pro - hold });
    });

    it(`Responses: a hosted web search per call, at the priority tier that served (${how}, Responses SDK)`, async () => {
      sdk.fake.script('script:openai-responses/response-web-search-priority');
      const params = { model: 'resp', input: 'Find switchyard', tools: [{ type: 'web_search' as const }] };
      let cost: number | undefined;
      let requestId: string;
      if (stream) {
        const { data, response } = await sdk.openai.responses.create({ ...params, stream: true }).withResponse();
        for await (const ev of data) if (ev.type === 'response.completed') cost = (ev.response.usage as { cost?: number } | undefined)?.cost;
        requestId = response.headers.get('x-request-id')!;
      } else {
        const { data, response } = await sdk.openai.responses.create(params).withResponse();
        cost = (data.usage as { cost?: number } | undefined)?.cost;
        expect(response.headers.get('x-switchyard-cost')).toBe('0.02325');
        requestId = response.headers.get('x-request-id')!;
      }
      expect(cost).toBe(usd(EXPECTED.resp));
      expect(await journalCost(requestId)).toBe(EXPECTED.resp);
      await expectBreakdown(requestId, EXPECTED.resp, { model: 'resp', lines: LINES.resp, serviceTier: 'priority' });
    });
  }
});

describe('usage above the hold is billed in full, as a recorded debt', () => {
  for (const stream of [true, false]) {
    const how = stream ? 'streamed' : 'collected';

    it(`an upstream reporting far more than the hold covers: the account pays it all and goes below zero, then gets 402s until topped up (${how})`, async () => {
      // Funded for the hold (what the gateway foresees of a five-word prompt), not for what the upstream will report.
      const funded = 200_000_000n;
      const { accountId, key } = await sdk.gw.newAccount(funded, `debt-${how}`);
      const client = new OpenAI({ baseURL: `${sdk.gw.url}/v1`, apiKey: key, maxRetries: 0 });
      sdk.fake.script('script:google-gemini/stream-long-context');
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello' }];
      let cost: number | undefined;
      let requestId: string;
      if (stream) {
        const { data, response } = await client.chat.completions.create({ model: 'pro', messages, stream: true, stream_options: { include_usage: true } }).withResponse();
        for await (const chunk of data) if (chunk.usage) cost = (chunk.usage as { cost?: number }).cost;
        requestId = response.headers.get('x-request-id')!;
      } else {
        const { data, response } = await client.chat.completions.create({ model: 'pro', messages }).withResponse();
        cost = (data.usage as { cost?: number }).cost;
        requestId = response.headers.get('x-request-id')!;
      }
      expect(cost).toBe(usd(EXPECTED.pro));
      const charged = await (async () => {
        for (let i = 0; i < 100; i++) {
          const lines = (await sdk.gw.ledger.ledgerEntries(accountId)).filter((e) => e.requestId === requestId);
          if (lines.length) return lines;
          await new Promise((r) => setTimeout(r, 20));
        }
        throw new Error(`request ${requestId} was not settled`);
      })();
      const hold = await holdAmount(requestId);
      expect(hold).toBeLessThan(funded);
      // One capture line of the whole cost, past the hold and below zero, saying so.
      expect(charged).toEqual([
        expect.objectContaining({ kind: 'capture', amount: -EXPECTED.pro, cost: EXPECTED.pro, balanceAfter: funded - EXPECTED.pro, reason: 'charged beyond its hold' }),
      ]);
      expect(await sdk.gw.ledger.getAccount(accountId)).toMatchObject({ balance: funded - EXPECTED.pro, held: 0n });
      const usage = (await (await fetch(`${sdk.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<Record<string, unknown>> };
      expect(usage.data[0]).toMatchObject({ request_id: requestId, cost: Number(EXPECTED.pro), beyond_hold: Number(EXPECTED.pro - hold) });
      expect(await sdk.gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });

      // Below zero: the next request is refused before it runs, in the caller's protocol shape.
      sdk.fake.script('script:google-gemini/stream-text');
      const refused = await client.chat.completions.create({ model: 'pro', messages }).then(() => undefined, (e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    });
  }
});

describe('output an upstream reports above max_tokens is billed in full', () => {
  // 10 input x $1.25 + 5,000 output (4,990 of them reasoning) x $10, per million: what OpenAI bills.
  const reported = 10n * 1_250n + 5_000n * 10_000n;

  for (const stream of [true, false]) {
    const how = stream ? 'streamed' : 'collected';

    it(`a request with max_tokens 100 whose upstream reports 5,000 output tokens pays for 5,000, beyond its hold (${how})`, async () => {
      sdk.fake.script('script:openai-chat/stream-output-beyond-ceiling');
      const params = { model: 'gpt', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hello' }] };
      let usage: OpenAI.CompletionUsage | undefined;
      let requestId: string;
      if (stream) {
        const { data, response } = await sdk.openai.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }).withResponse();
        for await (const chunk of data) if (chunk.usage) usage = chunk.usage;
        requestId = response.headers.get('x-request-id')!;
      } else {
        const { data, response } = await sdk.openai.chat.completions.create(params).withResponse();
        usage = data.usage;
        expect(response.headers.get('x-switchyard-cost')).toBe(String(usd(reported)));
        requestId = response.headers.get('x-request-id')!;
      }
      expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5_000, cost: usd(reported) });
      expect(await journalCost(requestId)).toBe(reported);
      // The hold covered the prompt and the 100-token ceiling; the rest is a recorded debt.
      const hold = await holdAmount(requestId);
      expect(hold).toBeLessThan(reported);
      await expectBreakdown(requestId, reported, { model: 'gpt', lines: [['input', 10, 1_250], ['output', 5_000, 10_000]], beyondHold: reported - hold });
      const lines = (await sdk.gw.ledger.ledgerEntries(sdk.gw.accountId, 500)).filter((e) => e.requestId === requestId);
      expect(lines).toEqual([expect.objectContaining({ kind: 'capture', amount: -reported, cost: reported, reason: 'charged beyond its hold' })]);
    });
  }
});
