import type { RateLimitStatus } from '../../ir/index.js';

/**
 * Anthropic's rate-limit headers (`anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`),
 * the reset as the RFC 3339 time the bucket is full again. The gateway's token limit counts input
 * and output together, which is what Anthropic's `tokens` headers describe.
 */
export function anthropicRateLimitHeaders(status: RateLimitStatus, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, bucket] of [['requests', status.requests], ['tokens', status.tokens]] as const) {
    if (!bucket) continue;
    headers[`anthropic-ratelimit-${name}-limit`] = String(bucket.limit);
    headers[`anthropic-ratelimit-${name}-remaining`] = String(bucket.remaining);
    // Whole seconds, rounded up: never before the bucket is really full.
    const reset = Math.ceil((nowMs + Math.max(0, bucket.resetMs)) / 1000) * 1000;
    headers[`anthropic-ratelimit-${name}-reset`] = new Date(reset).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return headers;
}
