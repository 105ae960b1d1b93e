/**
 * OpenTelemetry through the real server, exported over http/protobuf to a real OTLP receiver
 * (test/support/otlp-receiver.ts, decoding with the OpenTelemetry proto definitions): a streamed
 * request continues the caller's trace down to the upstream, a fallback shows both attempts, the
 * GenAI metrics arrive with the conventions' names, the request log and usage records join the
 * trace, and no credential is ever exported.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTelemetry } from '../../src/telemetry/load-telemetry.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';

let fake: FakeUpstream;
let gw: TestGateway;
let otlp: OtlpReceiver;
let openai: OpenAI;

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  // The standard variables only, as an operator sets them (the SDK reads process.env).
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_SERVICE_NAME: 'switchyard-under-test',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_BLRP_SCHEDULE_DELAY: '50',
    OTEL_METRIC_EXPORT_INTERVAL: '200',
  });
  fake = await startFakeUpstream();
  const catalog = fakeCatalog(fake, {
    maxRetries: 0,
    models: [
      { id: 'claude-refuses', provider: 'up-anthropic', upstream_model: 'script:anthropic-messages/stream-refusal', price: { input: '1', output: '4' }, fallbacks: ['up-openai'] },
      { id: 'echoes-keys', provider: 'up-openai', upstream_model: 'gpt-4o-mini', price: { input: '1', output: '4' } },
    ],
  });
  gw = await startTestGateway({ catalog, telemetry: (o) => loadTelemetry(process.env, o) });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await otlp?.close();
});

/** A caller's own trace context: `traceparent` as W3C Trace Context writes it. */
function callerContext() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const inTrace = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);
const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);

describe('traces', () => {
  it('a streamed request with a traceparent: server, attempt, upstream and ledger spans in that trace, tokens equal to the usage record', async () => {
    const caller = callerContext();
    fake.setScenario({ words: 12 });
    const stream = await openai.chat.completions.create(
      { model: 'up-openai', messages: [{ role: 'user', content: 'Say something secret-free' }], stream: true, stream_options: { include_usage: true }, temperature: 0.3 },
      { headers: { traceparent: caller.traceparent } },
    );
    for await (const _ of stream) void _;
    const upstreamCall = fake.requests.at(-1)!;

    const spans = await otlp.until(() => {
      const s = inTrace(caller.traceId);
      return s.some((x) => x.name === 'switchyard.ledger.settle') && s.some((x) => x.kind === SERVER) && s;
    });
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.parentSpanId).toBe(caller.spanId);
    expect(server.name).toBe('POST /v1/chat/completions');
    expect(server.resource['service.name']).toBe('switchyard-under-test');
    expect(server.resource['deployment.environment.name']).toBe('test');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'switchyard.account.id': gw.accountId,
      'gen_ai.request.model': 'up-openai',
      'gen_ai.response.model': 'up-openai',
      'switchyard.fallback': false,
    });
    expect(server.attributes['switchyard.key.id']).toMatch(/.+/);

    const [attempt] = childrenOf(spans, server).filter((s) => s.kind === CLIENT);
    expect(attempt.name).toBe('chat gpt-4o-mini');
    expect(attempt.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.request.temperature': 0.3,
      'gen_ai.request.stream': true,
      'gen_ai.response.finish_reasons': ['stop'],
      'switchyard.model': 'up-openai',
      'switchyard.deployment.id': expect.any(String),
      'switchyard.attempt.outcome': 'ok',
    });
    expect(attempt.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    // Content only on opt-in.
    expect(attempt.attributes['gen_ai.input.messages']).toBeUndefined();
    expect(attempt.attributes['gen_ai.output.messages']).toBeUndefined();

    const [upstream] = childrenOf(spans, attempt);
    expect(upstream).toMatchObject({ name: 'POST', kind: CLIENT });
    expect(upstream.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200, 'url.full': `${fake.url}/v1/chat/completions` });
    // The provider's side joins the trace: the upstream got this span as its parent.
    expect(upstreamCall.headers.traceparent).toBe(`00-${caller.traceId}-${upstream.spanId}-01`);

    const ledger = childrenOf(spans, server).filter((s) => s.kind === INTERNAL).map((s) => s.name);
    expect(ledger.sort()).toEqual(['switchyard.ledger.hold', 'switchyard.ledger.settle']);

    const requestId = server.attributes['switchyard.request.id'] as string;
    const [record] = (await gw.ledger.usageRecords(gw.accountId, 10)).filter((r) => r.requestId === requestId);
    const input = Number(record.tokens.inputNoCache + record.tokens.inputCacheRead + record.tokens.inputCacheWrite);
    const output = Number(record.tokens.output);
    expect(output).toBeGreaterThan(0);
    for (const span of [attempt, server, spans.find((s) => s.name === 'switchyard.ledger.settle')!]) {
      expect(span.attributes['gen_ai.usage.input_tokens']).toBe(input);
      expect(span.attributes['gen_ai.usage.output_tokens']).toBe(output);
    }
    expect(server.attributes['switchyard.cost.nanodollars']).toBe(Number(record.cost));
  });

  it('a fallback shows both attempts under the request, the refused one first', async () => {
    const caller = callerContext();
    // (The Anthropic SDK makes a span of its own, whose traceparent would replace this one.)
    const stream = await openai.chat.completions.create(
      { model: 'claude-refuses', max_tokens: 200, messages: [{ role: 'user', content: 'Hi' }], stream: true },
      { headers: { traceparent: caller.traceparent } },
    );
    for await (const _ of stream) void _;
    const spans = await otlp.until(() => {
      const s = inTrace(caller.traceId);
      return s.some((x) => x.name === 'switchyard.ledger.settle') && s.some((x) => x.kind === SERVER) && s;
    });
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.name).toBe('POST /v1/chat/completions');
    expect(server.attributes).toMatchObject({ 'switchyard.fallback': true, 'switchyard.attempts': 2, 'gen_ai.response.model': 'up-openai' });
    const attempts = childrenOf(spans, server).filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.attributes['switchyard.attempt.index']) - Number(b.attributes['switchyard.attempt.index']));
    expect(attempts.map((a) => [a.attributes['gen_ai.provider.name'], a.attributes['switchyard.model'], a.attributes['switchyard.attempt.outcome']])).toEqual([
      ['anthropic', 'claude-refuses', 'refusal'],
      ['openai', 'up-openai', 'ok'],
    ]);
    expect(attempts[0].attributes['gen_ai.response.finish_reasons']).toEqual(['refusal']);
    for (const a of attempts) expect(childrenOf(spans, a)).toHaveLength(1);
  });

  it('an upstream that echoes credentials: no key in any span, log record or metric exported', async () => {
    const caller = callerContext();
    fake.setScenario({ status: 400, echoCredentials: true });
    await expect(openai.chat.completions.create({ model: 'echoes-keys', messages: [{ role: 'user', content: 'Hi' }] }, { headers: { traceparent: caller.traceparent } })).rejects.toThrow();
    fake.setScenario(undefined);
    const spans = await otlp.until(() => {
      const s = inTrace(caller.traceId);
      return s.some((x) => x.kind === SERVER) && s.some((x) => x.name === 'POST') && s;
    });
    const upstream = spans.find((s) => s.name === 'POST')!;
    expect(upstream.attributes['http.response.status_code']).toBe(400);
    expect(spans.find((s) => s.kind === SERVER)!.attributes['http.response.status_code']).toBe(400);
    await otlp.until(() => otlp.logs.some((l) => l.traceId === caller.traceId));
    const everything = Buffer.concat(otlp.raw).toString('latin1');
    expect(everything).not.toContain('sk-fake-upstream');
    expect(everything).not.toContain(gw.key);
    expect(everything).not.toContain(gw.adminKey);
  });
});

describe('metrics, logs and usage export', () => {
  it('the GenAI conventions metrics arrive with their names and units', async () => {
    const names = ['gen_ai.client.token.usage', 'gen_ai.client.operation.duration', 'gen_ai.client.operation.time_to_first_chunk', 'gen_ai.server.request.duration', 'gen_ai.server.time_to_first_token'];
    await otlp.until(() => names.every((n) => otlp.metrics.some((m) => m.name === n)));
    const usage = otlp.metrics.filter((m) => m.name === 'gen_ai.client.token.usage');
    expect(usage[0].unit).toBe('{token}');
    const types = new Set(usage.flatMap((m) => m.points.map((p) => p.attributes['gen_ai.token.type'])));
    expect([...types].sort()).toEqual(['input', 'output']);
    const point = usage.flatMap((m) => m.points).find((p) => p.attributes['gen_ai.provider.name'] === 'openai')!;
    expect(point.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' });
    expect(otlp.metrics.find((m) => m.name === 'gen_ai.client.operation.duration')!.unit).toBe('s');
  });

  it('the request log line and the usage record are log records in the request trace', async () => {
    const caller = callerContext();
    const res = await openai.chat.completions
      .create({ model: 'up-openai', messages: [{ role: 'user', content: 'Hi' }], user: 'alice', metadata: { session_id: 's-telemetry' } } as any, { headers: { traceparent: caller.traceparent } })
      .withResponse();
    const requestId = res.response.headers.get('x-request-id')!;
    const usage = await otlp.until(() => otlp.logs.find((l) => l.eventName === 'switchyard.usage' && l.attributes['switchyard.request.id'] === requestId));
    const line = otlp.logs.find((l) => l.body === 'request' && l.attributes.requestId === requestId)!;
    const server = await otlp.until(() => inTrace(caller.traceId).find((s) => s.kind === SERVER));
    expect(line.traceId).toBe(caller.traceId);
    expect(line.attributes).toMatchObject({ trace_id: caller.traceId, span_id: server.spanId, status: 200, model: 'up-openai' });
    expect(usage.traceId).toBe(caller.traceId);
    const [record] = (await gw.ledger.usageRecords(gw.accountId, 10)).filter((r) => r.requestId === requestId);
    expect(usage.attributes).toMatchObject({
      'switchyard.account.id': gw.accountId,
      'switchyard.key.id': record.keyId,
      'gen_ai.request.model': 'up-openai',
      'gen_ai.response.model': 'up-openai',
      'switchyard.status': 'ok',
      'switchyard.fallback': false,
      'gen_ai.usage.input_tokens': Number(record.tokens.inputNoCache + record.tokens.inputCacheRead + record.tokens.inputCacheWrite),
      'gen_ai.usage.output_tokens': Number(record.tokens.output),
      'switchyard.cost.nanodollars': record.cost.toString(),
    });
  });

  it('exports arrive as protobuf', () => {
    expect(new Set(otlp.contentTypes.map((c) => c.contentType))).toEqual(new Set(['application/x-protobuf']));
    expect(new Set(otlp.contentTypes.map((c) => c.path))).toEqual(new Set(['/v1/traces', '/v1/metrics', '/v1/logs']));
  });
});
