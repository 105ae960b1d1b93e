import type { RateLimitStatus } from './rate-limit.js';

/**
 * Errors are typed values. Each protocol renders a GatewayError in its own shape in one place
 * (`protocols/<name>/encode-error.ts`): an HTTP body before the first byte, an in-stream error
 * event after it.
 */
export type ErrorKind =
  | 'invalid_request' // 400
  | 'authentication' // 401
  | 'insufficient_balance' // 402
  | 'permission' // 403
  | 'not_found' // 404
  | 'method_not_allowed' // 405
  | 'request_timeout' // 408: the request (its body) did not arrive in time
  | 'conflict' // 409
  | 'request_too_large' // 413
  | 'unsupported_media_type' // 415
  | 'upgrade_required' // 426
  | 'rate_limit' // 429
  | 'api_error' // 500
  | 'bad_gateway' // 502: the upstream answered something unusable
  | 'unavailable' // 503
  | 'timeout' // 504
  | 'overloaded'; // 529 on messages, 503 on chat

const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  insufficient_balance: 402,
  permission: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  request_too_large: 413,
  unsupported_media_type: 415,
  upgrade_required: 426,
  rate_limit: 429,
  api_error: 500,
  bad_gateway: 502,
  unavailable: 503,
  timeout: 504,
  overloaded: 529,
};

export interface GatewayErrorInit {
  /** The request field at fault, as a dotted path (`messages.0.content`). */
  param?: string;
  /** A machine-readable code (`content_filter`, `model_not_found`, ...). */
  code?: string;
  /** True when another attempt (same or next candidate) may succeed. */
  retryable?: boolean;
  /** Seconds, from an upstream `retry-after`. */
  retryAfter?: number;
  /** The HTTP status to use instead of the kind's default (e.g. an upstream's exact status). */
  status?: number;
  /** Extra fields for the error body (e.g. available balance). */
  details?: Record<string, unknown>;
  /** The caller's rate limits, for the rate-limit headers of a 429 the gateway itself refused. */
  rateLimit?: RateLimitStatus;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly param?: string;
  readonly code?: string;
  readonly retryable: boolean;
  readonly retryAfter?: number;
  readonly details?: Record<string, unknown>;
  readonly rateLimit?: RateLimitStatus;

  constructor(kind: ErrorKind, message: string, init: GatewayErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.kind = kind;
    this.status = init.status ?? STATUS[kind];
    this.param = init.param;
    this.code = init.code;
    this.retryable = init.retryable ?? false;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
    this.rateLimit = init.rateLimit;
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}

/**
 * Wrap anything thrown into a GatewayError (unknown failures become a 500 `api_error`). Its
 * message never carries the cause (a socket address, a SQL text, a stack): that goes to the log,
 * and the client gets the request id to quote.
 */
export function toGatewayError(e: unknown, requestId?: string): GatewayError {
  if (e instanceof GatewayError) return e;
  return new GatewayError('api_error', requestId ? `internal error (request ${requestId})` : 'internal error', { cause: e });
}

export const invalid = (message: string, param?: string) =>
  new GatewayError('invalid_request', message, { param });
