import { describe, expect, it } from 'vitest';
import { GatewayError, type ErrorKind } from '../../ir/index.js';
import { encodeError } from './encode-error.js';

const enc = (kind: ErrorKind, init = {}) => encodeError(new GatewayError(kind, 'msg', init), 'req');

describe('encode-error', () => {
  it('OpenAI shape with all four keys', () => {
    expect(enc('invalid_request', { param: 'previous_response_id' })).toEqual({
      status: 400, headers: {},
      body: { error: { message: 'msg', type: 'invalid_request_error', param: 'previous_response_id', code: null } },
    });
  });

  it.each([
    ['authentication', 401, 'authentication_error', null],
    ['insufficient_balance', 402, 'insufficient_quota', 'insufficient_quota'],
    ['permission', 403, 'permission_error', null],
    ['not_found', 404, 'not_found_error', null],
    ['rate_limit', 429, 'rate_limit_error', 'rate_limit_exceeded'],
    ['api_error', 500, 'server_error', null],
    ['bad_gateway', 502, 'server_error', null],
    ['unavailable', 503, 'server_error', null],
    ['timeout', 504, 'server_error', null],
    ['overloaded', 503, 'server_error', 'server_overloaded'],
  ] as const)('%s -> %i %s', (kind, status, type, code) => {
    const e = enc(kind);
    expect(e.status).toBe(status);
    expect(e.body).toEqual({ error: { message: 'msg', type, param: null, code } });
  });

  it('retry-after header, explicit code and status, details kept', () => {
    const e = enc('rate_limit', { retryAfter: 2.2, code: 'tokens' });
    expect(e.headers).toEqual({ 'retry-after': '3' });
    expect((e.body as any).error.code).toBe('tokens');
    expect(enc('api_error', { status: 418 }).status).toBe(418);
    expect((enc('insufficient_balance', { details: { available: 12, type: 'x' } }).body as any).error)
      .toEqual({ available: 12, message: 'msg', type: 'insufficient_quota', param: null, code: 'insufficient_quota' });
  });
});
