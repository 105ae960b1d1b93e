import { GatewayError } from '../../ir/index.js';
import { pickErrorMessage } from '../shared/pick-error-message.js';
import { parseRetryAfter, upstreamError } from '../transport/classify-status.js';
import type { ErrorAnswer } from '../transport/types.js';
import { OPENAI_KIND } from './api.js';

/**
 * An OpenAI-shaped failure (`{error:{message,type,param,code}}`) -> GatewayError. The HTTP
 * status decides the kind; Azure's prompt filter (400 `code:"content_filter"`) keeps its code so
 * routing can treat it as a refusal.
 */
export function decodeError(answer: ErrorAnswer): GatewayError {
  const err = errorObject(answer.body);
  const message = pickErrorMessage(err, answer);
  const code = stringOf(err?.code) ?? stringOf(err?.type);
  return upstreamError({
    status: answer.status,
    message,
    code,
    param: stringOf(err?.param),
    retryAfter: parseRetryAfter(answer.headers, answer.nowMs),
    provider: OPENAI_KIND,
  });
}

/**
 * An `{"error":...}` payload inside a 200 stream (OpenAI, OpenRouter, vLLM). There is no HTTP
 * status, so the error's own `code`/`status` (OpenRouter puts an int there) or its type decides.
 */
export function decodeStreamError(payload: Record<string, unknown>): GatewayError {
  const err = errorObject(payload);
  const numeric = [err?.status, err?.code].find((v) => typeof v === 'number' && v >= 400 && v < 600) as number | undefined;
  const status = numeric ?? statusForType(stringOf(err?.type) ?? stringOf(err?.code));
  return decodeError({ status, headers: {}, body: payload, nowMs: 0 });
}

function statusForType(type: string | undefined): number {
  switch (type) {
    case 'invalid_request_error':
      return 400;
    case 'rate_limit_exceeded':
    case 'rate_limit_error':
    case 'insufficient_quota':
      return 429;
    case 'overloaded_error':
      return 529;
    case 'server_overloaded':
    case 'service_unavailable':
      return 503;
    default:
      return 500;
  }
}

function errorObject(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const e = (body as { error?: unknown }).error;
  if (typeof e === 'object' && e !== null) return e as Record<string, unknown>;
  if (typeof e === 'string') return { message: e };
  return undefined;
}

function stringOf(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}
