import { describe, expect, it } from 'vitest';
import { GatewayError, type ErrorKind } from '../../ir/errors.js';
import { validateOfficial } from '../../../test/support/official-schemas.js';
import { encodeMessagesError } from './encode-error.js';

describe('encodeMessagesError', () => {
  it.each([
    ['invalid_request', 400, 'invalid_request_error'],
    ['authentication', 401, 'authentication_error'],
    ['insufficient_balance', 402, 'billing_error'],
    ['permission', 403, 'permission_error'],
    ['not_found', 404, 'not_found_error'],
    ['method_not_allowed', 405, 'invalid_request_error'],
    ['request_too_large', 413, 'request_too_large'],
    ['unsupported_media_type', 415, 'invalid_request_error'],
    ['rate_limit', 429, 'rate_limit_error'],
    ['api_error', 500, 'api_error'],
    ['bad_gateway', 502, 'api_error'],
    ['unavailable', 503, 'api_error'],
    ['timeout', 504, 'timeout_error'],
    ['overloaded', 529, 'overloaded_error'],
  ] as [ErrorKind, number, string][])('%s -> %d %s', (kind, status, type) => {
    const e = encodeMessagesError(new GatewayError(kind, 'msg'), 'req_1');
    expect(e.status).toBe(status);
    expect(e.body).toEqual({ type: 'error', error: { type, message: 'msg' }, request_id: 'req_1' });
    if (type !== 'request_too_large') expect(validateOfficial('anthropic', 'ErrorResponse', e.body)).toEqual([]);
  });

  it('uses an explicit upstream status, details and retry-after', () => {
    const e = encodeMessagesError(new GatewayError('rate_limit', 'slow', { status: 429, retryAfter: 30, details: { limit: 'rpm' } }), 'r');
    expect(e).toEqual({ status: 429, headers: { 'retry-after': '30' }, body: { type: 'error', error: { limit: 'rpm', type: 'rate_limit_error', message: 'slow' }, request_id: 'r' } });
    expect(encodeMessagesError(new GatewayError('api_error', 'x', { status: 529 }), 'r').body).toMatchObject({ error: { type: 'overloaded_error' } });
  });
});
