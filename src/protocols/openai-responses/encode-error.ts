import type { ErrorKind, GatewayError } from '../../ir/index.js';
import type { ErrorBody } from '../types.js';

/** OpenAI error `type` per kind (the same table as the chat protocol). */
const TYPE: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  insufficient_balance: 'insufficient_quota',
  permission: 'permission_error',
  not_found: 'not_found_error',
  method_not_allowed: 'invalid_request_error',
  conflict: 'conflict_error',
  request_too_large: 'invalid_request_error',
  unsupported_media_type: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  api_error: 'server_error',
  bad_gateway: 'server_error',
  unavailable: 'server_error',
  timeout: 'server_error',
  overloaded: 'server_error',
};

/** Codes OpenAI clients key on, used when the error carries none of its own. */
const DEFAULT_CODE: Partial<Record<ErrorKind, string>> = {
  insufficient_balance: 'insufficient_quota',
  rate_limit: 'rate_limit_exceeded',
  overloaded: 'server_overloaded',
};

export const errorType = (err: GatewayError): string => TYPE[err.kind] ?? 'server_error';
export const errorCode = (err: GatewayError): string | null => err.code ?? DEFAULT_CODE[err.kind] ?? null;

/** 529 is Anthropic's; OpenAI-shaped protocols say 503. */
export const errorStatus = (err: GatewayError): number => (err.status === 529 ? 503 : err.status);

/** `{error:{message, type, param, code}}` with all four keys, plus any details. */
export function encodeError(err: GatewayError, _requestId: string): ErrorBody {
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)));
  return {
    status: errorStatus(err),
    headers,
    body: {
      error: {
        ...(err.details ?? {}),
        message: err.message,
        type: errorType(err),
        param: err.param ?? null,
        code: errorCode(err),
      },
    },
  };
}

/**
 * `response.error.code` is a closed enum in the official schema; the precise code travels in
 * the `error` event that precedes `response.failed`.
 */
export function responseErrorCode(err: GatewayError): string {
  if (err.kind === 'rate_limit') return 'rate_limit_exceeded';
  if (err.kind === 'invalid_request') return 'invalid_prompt';
  return 'server_error';
}
