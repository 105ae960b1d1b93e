import { logs } from '@opentelemetry/api-logs';
import { metrics, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Telemetry, TelemetryOptions } from '../types.js';
import { genAiMetrics } from './genai-metrics.js';
import { OtelRequestTrace, type TraceTools } from './request-trace.js';

/**
 * The OpenTelemetry SDK for Node, configured by the standard variables alone (exporters, endpoint,
 * protocol, sampler, resource, batching: the SDK reads them). No automatic instrumentation: the
 * gateway makes its own spans at its seams, so each is named and filtered where it is made.
 */
export function startOtel(env: NodeJS.ProcessEnv, opts: TelemetryOptions): Telemetry {
  const named = (env.OTEL_SERVICE_NAME ?? '') !== '' || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({ serviceName: named ? undefined : 'switchyard', instrumentations: [] });
  sdk.start();
  const capture = (env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? '').trim().toLowerCase();
  const captureContent = capture === 'true' || capture === '1';
  const tools: TraceTools = {
    tracer: trace.getTracer('switchyard'),
    logger: logs.getLogger('switchyard'),
    metrics: genAiMetrics(metrics.getMeter('switchyard')),
    scrubber: opts.scrubber,
    captureContent,
  };
  return {
    captureContent,
    request: (method, headers) => new OtelRequestTrace(tools, method, headers),
    shutdown: () => sdk.shutdown(),
  };
}
