import { GatewayError, toGatewayError } from '../../ir/index.js';

const CONNECTION_CODES = new Set([
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
]);

/** The error thrown when the call's signal stopped the attempt (client gone, attempt cancelled). */
export function abortedError(reason?: unknown): GatewayError {
  return new GatewayError('api_error', 'upstream call aborted', { code: 'aborted', status: 499, cause: reason });
}

/** Map whatever undici or the decoders threw onto a GatewayError with the right retryable flag. */
export function mapTransportError(e: unknown, signal: AbortSignal): GatewayError {
  if (e instanceof GatewayError) return e;
  if (signal.aborted) return abortedError(signal.reason);
  const code = errorCode(e);
  const detail = e instanceof Error ? e.message : String(e);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new GatewayError('timeout', 'upstream connect timed out', { retryable: true, code: 'connect_timeout', cause: e });
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new GatewayError('timeout', 'upstream sent no response headers in time', {
        retryable: true,
        code: 'first_byte_timeout',
        cause: e,
      });
    case 'UND_ERR_BODY_TIMEOUT':
      return new GatewayError('timeout', 'upstream stream went idle', { retryable: true, code: 'idle_timeout', cause: e });
  }
  if (code !== undefined && CONNECTION_CODES.has(code)) {
    return new GatewayError('unavailable', `upstream connection failed: ${detail}`, {
      retryable: true,
      code: 'connection_error',
      cause: e,
    });
  }
  return toGatewayError(e);
}

function errorCode(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const own = (e as { code?: unknown }).code;
  if (typeof own === 'string') return own;
  const cause = (e as { cause?: unknown }).cause;
  const inner = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof inner === 'string' ? inner : undefined;
}
