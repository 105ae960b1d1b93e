import { metricsRegistry } from '../util/metrics.js';
import type { HandlerResult } from './types.js';

/** GET /metrics: the Prometheus text format. Unauthenticated, like most scrape endpoints. */
export async function getMetrics(): Promise<HandlerResult> {
  return { kind: 'text', status: 200, body: await metricsRegistry.metrics(), contentType: metricsRegistry.contentType };
}
