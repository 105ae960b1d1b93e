import { GatewayError, type ErrorKind } from '../../ir/index.js';

/** Status of an upstream answer, mapped onto the gateway's error kinds. */
export function kindForStatus(status: number): ErrorKind {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request';
    case 401:
      return 'authentication';
    case 403:
      return 'permission';
    case 404:
      return 'not_found';
    case 408:
      return 'timeout';
    case 409:
      return 'conflict';
    case 413:
      return 'request_too_large';
    case 415:
      return 'unsupported_media_type';
    case 429:
      return 'rate_limit';
    case 502:
      return 'bad_gateway';
    case 503:
      return 'unavailable';
    case 504:
      return 'timeout';
    case 529:
      return 'overloaded';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request';
  }
}

/** 429, 408, every 5xx (incl. 529): another attempt may succeed. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/**
 * `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date), in seconds.
 * `nowMs` is passed in so that decoders stay free of the clock.
 */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, nowMs: number): number | undefined {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms) / 1000;
  const ra = first(headers['retry-after']);
  if (ra === undefined) return undefined;
  const t = ra.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const date = Date.parse(t);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - nowMs) / 1000);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export interface UpstreamErrorFacts {
  status: number;
  /** The upstream's message; replaced for 401 (the client's key is not at fault). */
  message: string;
  /** Upstream error type/code, kept as the machine-readable code. */
  code?: string;
  param?: string;
  retryAfter?: number;
  /** Provider kind, for the message prefix. */
  provider: string;
}

/** Build the GatewayError for an upstream failure answer (HTTP status or in-stream error). */
export function upstreamError(f: UpstreamErrorFacts): GatewayError {
  const kind = kindForStatus(f.status);
  const message =
    kind === 'authentication'
      ? "upstream rejected the gateway's credentials"
      : kind === 'permission'
        ? `upstream denied the gateway's credentials access: ${f.message}`
        : f.message;
  return new GatewayError(kind, message, {
    code: f.code,
    param: f.param,
    retryable: isRetryableStatus(f.status),
    retryAfter: f.retryAfter,
    details: { upstream: { provider: f.provider, status: f.status } },
  });
}
