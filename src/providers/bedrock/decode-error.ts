import { GatewayError } from '../../ir/index.js';
import { isObject, str } from '../shared/read-json.js';
import { pickErrorMessage } from '../shared/pick-error-message.js';
import { parseRetryAfter, upstreamError } from '../transport/classify-status.js';
import type { ErrorAnswer } from '../transport/types.js';
import { BEDROCK_KIND } from './api.js';

/**
 * Bedrock's error types (the `x-amzn-errortype` header of an HTTP error, the `:exception-type` of
 * an in-stream exception, lower camel case there) and the status each stands for on the gateway.
 * ModelNotReady (429 on the wire), ModelError (424) and ModelStreamError are the model's own
 * failures: retried like an outage, 503 and 502 for clients. A `retryable` entry overrides the status's.
 */
const TYPES: Record<string, { status: number; retryable?: boolean }> = {
  throttlingexception: { status: 429 },
  servicequotaexceededexception: { status: 429 },
  modelnotreadyexception: { status: 503 },
  serviceunavailableexception: { status: 503 },
  internalserverexception: { status: 500 },
  modelerrorexception: { status: 502, retryable: true },
  modelstreamerrorexception: { status: 502, retryable: true },
  modeltimeoutexception: { status: 504 },
  validationexception: { status: 400 },
  accessdeniedexception: { status: 403 },
  unrecognizedclientexception: { status: 401 },
  invalidsignatureexception: { status: 401 },
  expiredtokenexception: { status: 401 },
  resourcenotfoundexception: { status: 404 },
  conflictexception: { status: 409 },
};

/**
 * `{"message": ...}` (or `Message`) with the type in `x-amzn-errortype`
 * (`ValidationException:http://internal.amazon.com/coral/...`) -> GatewayError. The type is the
 * machine-readable code; without a known type the HTTP status decides.
 */
export function decodeError(answer: ErrorAnswer): GatewayError {
  const header = answer.headers['x-amzn-errortype'];
  const type = errorType(Array.isArray(header) ? header[0] : header) ?? errorType(isObject(answer.body) ? str(answer.body.__type) : undefined);
  return typedError(type, answer.status, message(answer), parseRetryAfter(answer.headers, answer.nowMs));
}

/** An exception frame inside a 200 stream (`:exception-type` and its `{"message": ...}`). */
export function decodeStreamException(exceptionType: string, payload: string): GatewayError {
  let body: unknown = payload;
  try {
    body = JSON.parse(payload);
  } catch {
    // A payload that is not JSON is the message itself.
  }
  const type = errorType(exceptionType);
  return typedError(type, undefined, message({ status: 500, headers: {}, body, nowMs: 0 }), undefined);
}

function typedError(type: string | undefined, status: number | undefined, text: string, retryAfter: number | undefined): GatewayError {
  const known = type ? TYPES[type.toLowerCase()] : undefined;
  const err = upstreamError({ status: known?.status ?? status ?? 500, message: text, code: type, retryAfter, provider: BEDROCK_KIND });
  if (known?.retryable === undefined || known.retryable === err.retryable) return err;
  return new GatewayError(err.kind, err.message, { code: err.code, retryable: known.retryable, retryAfter: err.retryAfter, details: err.details });
}

/** `ThrottlingException:http://...` or `com.amazon.coral#ThrottlingException` -> `ThrottlingException`. */
function errorType(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const name = raw.split(':')[0].split('#').at(-1)!.trim();
  if (!name) return undefined;
  // In-stream types are lower camel case (`throttlingException`); the code is the HTTP form.
  return name[0].toUpperCase() + name.slice(1);
}

function message(answer: ErrorAnswer): string {
  const body = isObject(answer.body) ? answer.body : undefined;
  const text = str(body?.message) || str(body?.Message);
  return text || pickErrorMessage(undefined, answer);
}
