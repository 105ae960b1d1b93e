import type { Published } from './published.js';
import type { ErrorKind, GatewayError } from '../../ir/index.js';
import type { ErrorBody } from '../types.js';

/**
 * How one OpenAI-shaped protocol (chat, responses) renders gateway errors. The two agree on the
 * body shape and nearly all `type`s, but not on every default code or status, so each adapter
 * passes its own dialect.
 */
export interface OpenAIErrorDialect {
  /** Where this protocol's `type` differs from the common table. */
  types?: Partial<Record<ErrorKind, string>>;
  /** Codes clients key on, used when the error carries none of its own. */
  defaultCodes: Partial<Record<ErrorKind, string>>;
  /** The HTTP status this protocol reports (529 is Anthropic's; OpenAI clients know 503). */
  status: (err: GatewayError) => number;
}

/** OpenAI error `type` per gateway error kind. */
const TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  insufficient_balance: 'insufficient_quota',
  permission: 'permission_error',
  not_found: 'not_found_error',
  method_not_allowed: 'invalid_request_error',
  request_timeout: 'invalid_request_error',
  conflict: 'invalid_request_error',
  request_too_large: 'invalid_request_error',
  unsupported_media_type: 'invalid_request_error',
  upgrade_required: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  api_error: 'server_error',
  bad_gateway: 'server_error',
  unavailable: 'server_error',
  timeout: 'server_error',
  overloaded: 'server_error',
};

export function openAIErrorType(err: GatewayError, dialect: OpenAIErrorDialect): string {
  return dialect.types?.[err.kind] ?? TYPES[err.kind] ?? 'server_error';
}

export function openAIErrorCode(err: GatewayError, dialect: OpenAIErrorDialect): string | null {
  return err.code ?? dialect.defaultCodes[err.kind] ?? null;
}

/** `{error:{message, type, param, code}}` with all four keys, plus any details; also the in-stream error frame. */
export function openAIErrorObject(err: GatewayError, dialect: OpenAIErrorDialect): Published<'OpenAIErrorResponse'> {
  return {
    error: {
      ...err.details,
      message: err.message,
      type: openAIErrorType(err, dialect),
      param: err.param ?? null,
      code: openAIErrorCode(err, dialect),
    },
  };
}

/** The whole error response: dialect status, `retry-after` in whole seconds when known, the error object. */
export function encodeOpenAIError(err: GatewayError, dialect: OpenAIErrorDialect): ErrorBody {
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)));
  return { status: dialect.status(err), body: openAIErrorObject(err, dialect), headers };
}
