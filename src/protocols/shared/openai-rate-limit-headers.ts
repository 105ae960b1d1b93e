import type { BucketStatus, RateLimitStatus } from '../../ir/index.js';

/**
 * OpenAI's rate-limit headers (`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`), the reset
 * as a duration the way OpenAI writes it, Go's form (`0s`, `20ms`, `1.5s`, `6m0s`, `8h20m48s`).
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

export function duration({ resetMs }: Pick<BucketStatus, 'resetMs'>): string {
  const ms = Math.max(0, Math.ceil(resetMs));
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = `${Number(((ms % 60_000) / 1000).toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}
