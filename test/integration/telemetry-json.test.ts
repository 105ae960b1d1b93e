/**
 * OpenTelemetry over http/json, with message content captured on the operator's opt-in
 * (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) and metrics turned off by their own
 * standard variable; the sampler's `traceparent` decision is followed.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTelemetry } from '../../src/telemetry/load-telemetry.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

let fake: FakeUpstream;
let gw: TestGateway;
let otlp: OtlpReceiver;
let openai: OpenAI;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_BLRP_SCHEDULE_DELAY: '50',
  });
  fake = await startFakeUpstream();
  gw = await startTestGateway({ catalog: fakeCatalog(fake), telemetry: (o) => loadTelemetry(process.env, o) });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await otlp?.close();
});

describe('http/json export with content capture', () => {
  it('the attempt span carries the messages in the conventions shape; spans arrive as JSON', async () => {
    const traceId = randomBytes(16).toString('hex');
    const answer = await openai.chat.completions.create(
      { model: 'up-openai', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is the answer?' }] },
      { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } },
    );
    const attempt = await otlp.until(() => otlp.spans.find((s) => s.traceId === traceId && s.name.startsWith('chat ')));
    expect(JSON.parse(attempt.attributes['gen_ai.input.messages'] as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'What is the answer?' }] }]);
    expect(JSON.parse(attempt.attributes['gen_ai.system_instructions'] as string)).toEqual([{ type: 'text', content: 'Be brief.' }]);
    const output = JSON.parse(attempt.attributes['gen_ai.output.messages'] as string);
    expect(output).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: answer.choices[0].message.content }], finish_reason: 'stop' }]);
    expect(otlp.contentTypes.filter((c) => c.path === '/v1/traces').every((c) => c.contentType.includes('application/json'))).toBe(true);
  });

  it('a caller that did not sample its trace is not recorded (parent-based sampler)', async () => {
    const traceId = randomBytes(16).toString('hex');
    await openai.chat.completions.create({ model: 'up-openai', messages: [{ role: 'user', content: 'Hi' }] }, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00` } });
    // The upstream still gets the caller's trace, unsampled.
    expect(fake.requests.at(-1)!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    await new Promise((r) => setTimeout(r, 300));
    expect(otlp.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });

  it('OTEL_METRICS_EXPORTER=none: no metrics are sent', () => {
    expect(otlp.contentTypes.filter((c) => c.path === '/v1/metrics')).toEqual([]);
  });
});
