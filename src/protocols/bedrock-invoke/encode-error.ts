import type { GatewayError } from '../../ir/errors.js';
import type { ErrorBody } from '../types.js';

/**
 * Bedrock's error type for a status (the `x-amzn-errortype` header of an HTTP error; an in-stream
 * exception's `:exception-type` is the same name in lower camel case), as the AWS SDKs and Bedrock's
 * own documentation name them.
 */
export function bedrockErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'UnrecognizedClientException';
    case 402:
    case 403:
      return 'AccessDeniedException';
    case 404:
      return 'ResourceNotFoundException';
    case 408:
    case 504:
      return 'ModelTimeoutException';
    case 409:
      return 'ConflictException';
    case 429:
      return 'ThrottlingException';
    case 502:
      return 'ModelErrorException';
    case 503:
    case 529:
      return 'ServiceUnavailableException';
    default:
      return status >= 500 ? 'InternalServerException' : 'ValidationException';
  }
}

/**
 * `{"message"}` with the type in `x-amzn-errortype`. Bedrock has no 529: an overloaded upstream is
 * its 503 ServiceUnavailableException. The field at fault leads the message, as in Anthropic's shape.
 */
export function encodeInvokeError(err: GatewayError): ErrorBody {
  const headers: Record<string, string> = { 'x-amzn-errortype': bedrockErrorType(err.status) };
  if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)));
  const message = err.param && !err.message.includes(err.param) ? `${err.param}: ${err.message}` : err.message;
  return { status: err.status === 529 ? 503 : err.status, body: { message }, headers };
}
