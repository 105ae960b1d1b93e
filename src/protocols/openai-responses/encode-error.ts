import type { GatewayError } from '../../ir/index.js';
import { encodeOpenAIError, openAIErrorCode, openAIErrorType, type OpenAIErrorDialect } from '../shared/openai-error.js';
import type { ErrorBody } from '../types.js';

/** The Responses dialect: its own conflict type and default codes; any 529 is reported as 503. */
const RESPONSES: OpenAIErrorDialect = {
  types: { conflict: 'conflict_error' },
  defaultCodes: {
    insufficient_balance: 'insufficient_quota',
    rate_limit: 'rate_limit_exceeded',
    overloaded: 'server_overloaded',
  },
  status: (err) => (err.status === 529 ? 503 : err.status),
};

export const errorType = (err: GatewayError): string => openAIErrorType(err, RESPONSES);
export const errorCode = (err: GatewayError): string | null => openAIErrorCode(err, RESPONSES);

/** `{error:{message, type, param, code}}` with all four keys, plus any details. */
export function encodeError(err: GatewayError, _requestId: string): ErrorBody {
  return encodeOpenAIError(err, RESPONSES);
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
