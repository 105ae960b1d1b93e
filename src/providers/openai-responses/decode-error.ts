import type { GatewayError } from '../../ir/index.js';
import { decodeError as decodeOpenAIError } from '../openai/decode-error.js';
import { isObject } from '../shared/read-json.js';
import type { ErrorAnswer } from '../transport/types.js';
import { RESPONSES_TYPE } from './api.js';

/** Same `{error:{message,type,param,code}}` shape as chat; only the provider label differs. */
export function decodeError(answer: ErrorAnswer): GatewayError {
  const err = decodeOpenAIError(answer);
  const upstream = err.details?.upstream;
  if (upstream && typeof upstream === 'object') (upstream as Record<string, unknown>).provider = RESPONSES_TYPE;
  return err;
}

/**
 * An in-stream failure: the `error` event (`{code, message, param}` at the top level, sometimes
 * also nested in `error`) or `response.failed` (`response.error: {code, message}`). There is no
 * status, so the code decides: rate limits and quota are 429, everything else a 500.
 */
export function decodeStreamError(payload: Record<string, unknown>): GatewayError {
  const nested = isObject(payload.error) ? payload.error : isObject(payload.response) && isObject(payload.response.error) ? payload.response.error : {};
  const code = str(payload.code) ?? str(nested.code) ?? str(nested.type);
  const message = str(payload.message) ?? str(nested.message) ?? 'the upstream response failed';
  const status = statusForCode(code);
  return decodeError({ status, headers: {}, body: { error: { message, code: code ?? null, param: str(payload.param) ?? str(nested.param) ?? null } }, nowMs: 0 });
}

function statusForCode(code: string | undefined): number {
  switch (code) {
    case 'rate_limit_exceeded':
    case 'insufficient_quota':
      return 429;
    case 'invalid_prompt':
    case 'invalid_request_error':
    case 'context_length_exceeded':
      return 400;
    case 'server_overloaded':
    case 'service_unavailable':
      return 503;
    default:
      return 500;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
