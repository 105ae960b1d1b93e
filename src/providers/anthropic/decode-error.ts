import type { GatewayError } from '../../ir/index.js';
import { pickErrorMessage } from '../shared/pick-error-message.js';
import { parseRetryAfter, upstreamError } from '../transport/classify-status.js';
import type { ErrorAnswer } from '../transport/types.js';
import { ANTHROPIC_KIND } from './api.js';

/** Anthropic error types and the status each one stands for (for in-stream `error` events). */
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** `{type:"error", error:{type,message}}` with its HTTP status -> GatewayError. */
export function decodeError(answer: ErrorAnswer): GatewayError {
  const err = errorObject(answer.body);
  const type = typeof err?.type === 'string' ? err.type : undefined;
  const message = pickErrorMessage(err, answer);
  return upstreamError({
    status: answer.status,
    message,
    code: type,
    retryAfter: parseRetryAfter(answer.headers, answer.nowMs),
    provider: ANTHROPIC_KIND,
  });
}

/** An in-stream `event: error` (after a 200): the error type decides the status. */
export function decodeStreamError(payload: Record<string, unknown>): GatewayError {
  const err = errorObject(payload);
  const type = typeof err?.type === 'string' ? err.type : '';
  return decodeError({ status: STATUS_OF_TYPE[type] ?? 500, headers: {}, body: payload, nowMs: 0 });
}

function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const e = (body as { error?: unknown }).error;
  return typeof e === 'object' && e !== null ? (e as Record<string, unknown>) : undefined;
}
