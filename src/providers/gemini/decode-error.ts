import type { GatewayError } from '../../ir/index.js';
import { isObject, type Json } from '../shared/read-json.js';
import { pickErrorMessage } from '../shared/pick-error-message.js';
import { parseRetryAfter, upstreamError } from '../transport/classify-status.js';
import type { ErrorAnswer } from '../transport/types.js';
import { GEMINI_KIND } from './api.js';

/** google.rpc canonical codes and the HTTP status each stands for (for in-stream errors). */
const STATUS_OF_CODE: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/**
 * Google's `{error:{code,message,status,details}}` with its HTTP status -> GatewayError. The
 * canonical `status` (`RESOURCE_EXHAUSTED`, `UNAVAILABLE`, ...) is the machine-readable code. The
 * Gemini API answers a bad key with 400 `API_KEY_INVALID`: that is the gateway's credentials, so
 * it is treated as the 401 it means. A `google.rpc.RetryInfo` delay stands in for `retry-after`.
 */
export function decodeError(answer: ErrorAnswer): GatewayError {
  const err = errorObject(answer.body);
  const code = typeof err?.status === 'string' && err.status ? err.status : undefined;
  const details = Array.isArray(err?.details) ? err.details.filter(isObject) : [];
  const keyRejected = details.some((d) => d.reason === 'API_KEY_INVALID');
  return upstreamError({
    status: keyRejected ? 401 : answer.status,
    message: pickErrorMessage(err, answer),
    code,
    retryAfter: parseRetryAfter(answer.headers, answer.nowMs) ?? retryDelay(details),
    provider: GEMINI_KIND,
  });
}

/** An `{"error":...}` payload inside a 200 stream: its numeric `code`, else its `status`, decides. */
export function decodeStreamError(payload: Json): GatewayError {
  const err = errorObject(payload);
  const numeric = typeof err?.code === 'number' && err.code >= 400 && err.code < 600 ? err.code : undefined;
  const status = numeric ?? STATUS_OF_CODE[typeof err?.status === 'string' ? err.status : ''] ?? 500;
  return decodeError({ status, headers: {}, body: payload, nowMs: 0 });
}

/** `RetryInfo.retryDelay` is a duration string (`"34.4s"`), in seconds. */
function retryDelay(details: Json[]): number | undefined {
  const info = details.find((d) => typeof d['@type'] === 'string' && d['@type'].endsWith('google.rpc.RetryInfo'));
  const m = typeof info?.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(info.retryDelay) : null;
  return m ? Number(m[1]) : undefined;
}

function errorObject(body: unknown): Json | undefined {
  if (!isObject(body)) return undefined;
  return isObject(body.error) ? body.error : undefined;
}
