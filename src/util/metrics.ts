import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics (prom-client), served at GET /metrics. One registry per process: several
 * gateways in one process (tests) share it, which is what a scrape of that process should see.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'switchyard_' });

export const httpRequests = new Counter({
  name: 'switchyard_http_requests_total',
  help: 'HTTP requests by operation and status.',
  labelNames: ['operation', 'status'] as const,
  registers: [metricsRegistry],
});

export const httpDuration = new Histogram({
  name: 'switchyard_http_request_duration_seconds',
  help: 'Time from request to the last byte of the response (whole stream for SSE).',
  labelNames: ['operation'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  registers: [metricsRegistry],
});

export const attempts = new Counter({
  name: 'switchyard_attempts_total',
  help: 'Upstream attempts by model and outcome (ok, refusal, error).',
  labelNames: ['model', 'outcome'] as const,
  registers: [metricsRegistry],
});

export const tokens = new Counter({
  name: 'switchyard_tokens_total',
  help: 'Billed tokens by model and kind (input, cache_read, cache_write, output, reasoning).',
  labelNames: ['model', 'kind'] as const,
  registers: [metricsRegistry],
});

export const costNanodollars = new Counter({
  name: 'switchyard_cost_nanodollars_total',
  help: 'Priced cost of billed attempts, in nanodollars (before the hold cap).',
  labelNames: ['model'] as const,
  registers: [metricsRegistry],
});

export const holdsPlaced = new Counter({
  name: 'switchyard_holds_total',
  help: 'Holds placed, by where: served from this instance\'s balance lease (no database round trip), or in the database.',
  labelNames: ['from'] as const,
  registers: [metricsRegistry],
});

export const earlyUpstreamCalls = new Counter({
  name: 'switchyard_early_upstream_calls_total',
  help: 'Upstream calls started while the hold committed, by the hold\'s answer (placed, or refused: the call was cancelled).',
  labelNames: ['hold'] as const,
  registers: [metricsRegistry],
});

export const rateLimited = new Counter({
  name: 'switchyard_rate_limited_total',
  help: 'Requests refused by a key rate limit, by the limit that refused (requests or tokens).',
  labelNames: ['limit'] as const,
  registers: [metricsRegistry],
});

export const rateLimitStoreErrors = new Counter({
  name: 'switchyard_rate_limit_store_errors_total',
  help: 'Rate-limit checks that could not reach the store (Redis); such requests are admitted.',
  registers: [metricsRegistry],
});

/** A deployment's calls by outcome: `success`, `failure` (counts against it), `ignored` (the client's fault: 4xx but 408/429). */
export const deploymentRequests = new Counter({
  name: 'switchyard_deployment_requests_total',
  help: 'Calls to a deployment by outcome: success, failure (counts toward a cooldown), ignored (a client error).',
  labelNames: ['deployment', 'outcome'] as const,
  registers: [metricsRegistry],
});

export const deploymentLatency = new Histogram({
  name: 'switchyard_deployment_latency_seconds',
  help: 'Time from a call to a deployment to its first output, for successful calls.',
  labelNames: ['deployment'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
  registers: [metricsRegistry],
});

export const deploymentCooldowns = new Counter({
  name: 'switchyard_deployment_cooldowns_total',
  help: 'Cooldowns this instance started, by reason: retry_after (a 429/503/529 that named a wait), failures (in a row), error_rate, probe (a probe failed).',
  labelNames: ['deployment', 'reason'] as const,
  registers: [metricsRegistry],
});

export const deploymentInFlight = new Gauge({
  name: 'switchyard_deployment_in_flight',
  help: 'Calls running on a deployment in this process.',
  labelNames: ['deployment'] as const,
  registers: [metricsRegistry],
});

/**
 * What the deployment gauges read at each scrape: every open health store registers a reader
 * (cooldowns end with time, not with an event, so the state is read when scraped).
 */
export const deploymentStateReaders = new Set<() => Array<{ id: string; coolingDown: boolean }>>();

export const deploymentCooldown = new Gauge({
  name: 'switchyard_deployment_cooldown',
  help: 'Whether a deployment is cooling down now (1) or may be tried (0: healthy or probing).',
  labelNames: ['deployment'] as const,
  registers: [metricsRegistry],
  collect() {
    // Several gateways in one process (tests) may know one deployment: cooling in any is cooling.
    const cooling = new Map<string, boolean>();
    for (const read of deploymentStateReaders) for (const d of read()) cooling.set(d.id, (cooling.get(d.id) ?? false) || d.coolingDown);
    this.reset();
    for (const [id, c] of cooling) this.set({ deployment: id }, c ? 1 : 0);
  },
});

export const usageWebhookRecords = new Counter({
  name: 'switchyard_usage_webhook_records_total',
  help: 'Usage records the usage webhook delivered (acknowledged with a 2xx), by this instance.',
  registers: [metricsRegistry],
});

export const usageWebhookFailures = new Counter({
  name: 'switchyard_usage_webhook_failures_total',
  help: 'Usage webhook deliveries that failed and will be retried, by the answer\'s status (error: no answer).',
  labelNames: ['status'] as const,
  registers: [metricsRegistry],
});

export const usageWebhookCursor = new Gauge({
  name: 'switchyard_usage_webhook_cursor_timestamp_seconds',
  help: 'When the last usage record this instance delivered was made (Unix seconds): time() minus it is how far the export lags.',
  registers: [metricsRegistry],
});
