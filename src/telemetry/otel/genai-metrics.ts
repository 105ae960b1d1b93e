import type { Attributes as OtelAttributes, Histogram, Meter } from '@opentelemetry/api';

/** The bucket boundaries the GenAI conventions give for each histogram. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];
const PER_TOKEN_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5];

/**
 * The GenAI semantic conventions' metrics. The gateway is a client of its upstreams (each attempt:
 * gen_ai.client.*) and a GenAI server to its callers (each completion request: gen_ai.server.*).
 */
export interface GenAiMetrics {
  tokenUsage: Histogram<OtelAttributes>;
  operationDuration: Histogram<OtelAttributes>;
  timeToFirstChunk: Histogram<OtelAttributes>;
  serverRequestDuration: Histogram<OtelAttributes>;
  serverTimeToFirstToken: Histogram<OtelAttributes>;
  serverTimePerOutputToken: Histogram<OtelAttributes>;
}

export function genAiMetrics(meter: Meter): GenAiMetrics {
  const histogram = (name: string, unit: string, description: string, buckets: number[]) =>
    meter.createHistogram(name, { unit, description, advice: { explicitBucketBoundaries: buckets } });
  return {
    tokenUsage: histogram('gen_ai.client.token.usage', '{token}', 'Number of input and output tokens used.', TOKEN_BUCKETS),
    operationDuration: histogram('gen_ai.client.operation.duration', 's', 'GenAI operation duration.', DURATION_BUCKETS),
    timeToFirstChunk: histogram('gen_ai.client.operation.time_to_first_chunk', 's', 'Time to receive the first chunk of a streamed response.', FIRST_TOKEN_BUCKETS),
    serverRequestDuration: histogram('gen_ai.server.request.duration', 's', 'Generative AI server request duration such as time-to-last byte or last output token.', DURATION_BUCKETS),
    serverTimeToFirstToken: histogram('gen_ai.server.time_to_first_token', 's', 'Time to generate first token for successful responses.', FIRST_TOKEN_BUCKETS),
    serverTimePerOutputToken: histogram('gen_ai.server.time_per_output_token', 's', 'Time per output token generated after the first token for successful responses.', PER_TOKEN_BUCKETS),
  };
}
