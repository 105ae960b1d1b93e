import { describe, expect, it } from 'vitest';
import { loadTelemetry, telemetryRequested } from './load-telemetry.js';
import { createScrubber } from '../util/redact.js';
import { attributeFilter } from './safe-attributes.js';

describe('telemetryRequested', () => {
  it('is off with no OTEL_* variable, and then nothing is loaded', async () => {
    expect(telemetryRequested({})).toBe(false);
    expect(await loadTelemetry({}, { scrubber: createScrubber() })).toBeUndefined();
  });
  it('is on with an endpoint or an exporter named', () => {
    expect(telemetryRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(telemetryRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(telemetryRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
  });
  it('is off when the SDK is disabled or every exporter is none', () => {
    expect(telemetryRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(telemetryRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' })).toBe(false);
    expect(telemetryRequested({ OTEL_SERVICE_NAME: 'gw' })).toBe(false);
  });
});

describe('attributeFilter', () => {
  const filter = attributeFilter(createScrubber(() => ['provider-secret-1234']), 'caller-own-key-5678');
  it('scrubs credential-named attributes, keeps token counts', () => {
    expect(filter({ authorization: 'x-secret-value', 'gen_ai.usage.input_tokens': 3, 'switchyard.key.id': 'key_1', gone: undefined })).toEqual({
      authorization: '[redacted]',
      'gen_ai.usage.input_tokens': 3,
      'switchyard.key.id': 'key_1',
    });
  });
  it('removes known secrets, the caller\'s key and credential-shaped text from values', () => {
    expect(filter({ msg: 'refused: authorization=Bearer abcdefghijkl key provider-secret-1234', list: ['sent caller-own-key-5678'] })).toEqual({
      msg: 'refused: authorization=Bearer [redacted] key [redacted]',
      list: ['sent [redacted]'],
    });
  });
});
