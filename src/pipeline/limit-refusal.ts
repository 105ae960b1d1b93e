/** A request's rate-limit buckets and the 429 a refused admission gets. */
import { GatewayError } from '../ir/index.js';
import { refusedBy, type LimitDecision } from '../limits/index.js';
import type { CallContext } from './types.js';

/** A 429 naming the limit that refused, with when to come back. */
export function rateLimitError(d: LimitDecision, inputTokens: number): GatewayError {
  const rateLimit = { requests: d.requests, tokens: d.tokens };
  if (d.tooLarge) {
    // OpenAI's answer to a request larger than the limit: a 429 that waiting cannot cure.
    return new GatewayError('rate_limit', `Request too large: ${inputTokens} input tokens are more than this key's limit of ${d.tokens!.limit} tokens per minute (TPM).`, {
      code: 'rate_limit_exceeded',
      rateLimit,
    });
  }
  const by = refusedBy(d);
  const bucket = by === 'requests' ? d.requests! : d.tokens!;
  const seconds = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
  const what = by === 'requests' ? 'requests per minute (RPM)' : 'tokens per minute (TPM)';
  return new GatewayError('rate_limit', `Rate limit reached for ${what} on this key: limit ${bucket.limit}. Please try again in ${seconds}s.`, {
    code: 'rate_limit_exceeded',
    retryAfter: seconds,
    rateLimit,
  });
}

/** Whose rate-limit buckets a request draws on: its key's, or its user's (ids never collide: key_…, usr_…). */
export function limitsOwner(ctx: CallContext): string {
  return ctx.keyId ?? ctx.userId ?? ctx.accountId;
}
