import type { BucketStatus, RateLimitStatus } from '../../ir/index.js';

/**
 * OpenAI's rate-limit headers (`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`), the reset
 * as a duration the way OpenAI writes it (`20ms`, `1.5s`, `6m0s`).
 */
export function openAIRateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, bucket] of [['requests', status.requests], ['tokens', status.tokens]] as const) {
    if (!bucket) continue;
    headers[`x-ratelimit-limit-${name}`] = String(bucket.limit);
    headers[`x-ratelimit-remaining-${name}`] = String(bucket.remaining);
    headers[`x-ratelimit-reset-${name}`] = duration(bucket);
  }
  return headers;
}

function duration({ resetMs }: BucketStatus): string {
  const ms = Math.max(0, Math.ceil(resetMs));
  if (ms < 1000) return `${ms}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = `${Number(((ms % 60_000) / 1000).toFixed(3))}s`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}
