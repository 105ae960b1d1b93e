import type { ErrorKind, GatewayError } from '../../ir/errors.js';
import type { ErrorBody } from '../types.js';

/** OpenAI error `type` per gateway error kind. */
const TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  insufficient_balance: 'insufficient_quota',
  permission: 'permission_error',
  not_found: 'not_found_error',
  method_not_allowed: 'invalid_request_error',
  conflict: 'invalid_request_error',
  request_too_large: 'invalid_request_error',
  unsupported_media_type: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  api_error: 'server_error',
  bad_gateway: 'server_error',
  unavailable: 'server_error',
  timeout: 'server_error',
  overloaded: 'server_error',
};

/** Codes OpenAI SDKs and clients key on, used when the error carries none. */
const DEFAULT_CODES: Partial<Record<ErrorKind, string>> = {
  authentication: 'invalid_api_key',
  insufficient_balance: 'insufficient_quota',
  overloaded: 'overloaded',
};

/** The `{error:{message,type,param,code,...details}}` object, shared with the in-stream error frame. */
export function chatErrorObject(err: GatewayError): { error: Record<string, unknown> } {
  return {
    error: {
      ...err.details,
      message: err.message,
      type: TYPES[err.kind] ?? 'server_error',
      param: err.param ?? null,
      code: err.code ?? DEFAULT_CODES[err.kind] ?? null,
    },
  };
}

/**
 * Chat error response. Overload is 529 in the IR (Anthropic's status); OpenAI clients know 503
 * for it, so chat reports 503 unless the error carries an explicit other status.
 */
export function encodeChatError(err: GatewayError, _requestId: string): ErrorBody {
  const status = err.kind === 'overloaded' && err.status === 529 ? 503 : err.status;
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)));
  return { status, body: chatErrorObject(err), headers };
}
