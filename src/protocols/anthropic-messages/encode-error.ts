import type { GatewayError } from '../../ir/errors.js';
import type { ErrorBody } from '../types.js';

/**
 * Anthropic error `type` by HTTP status. 504 uses `timeout_error` (in Anthropic's official
 * ErrorResponse schema); 405/409/415 have no own type and read as invalid requests.
 */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * `{type, message, ...details}`: the `error` member of both the HTTP body and the stream event.
 * Anthropic's shape has no `param`, so the field at fault leads the message (`tools.2.name: ...`),
 * as Anthropic's own messages do, unless the message names it already.
 */
export function anthropicErrorObject(err: GatewayError): Record<string, unknown> {
  const message = err.param && !err.message.includes(err.param) ? `${err.param}: ${err.message}` : err.message;
  return { ...err.details, type: anthropicErrorType(err.status), message };
}

export function encodeMessagesError(err: GatewayError, requestId: string): ErrorBody {
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)));
  return { status: err.status, body: { type: 'error', error: anthropicErrorObject(err), request_id: requestId }, headers };
}
