import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../ir/errors.js';
import { encodeChatError } from './encode-error.js';

describe('encodeChatError', () => {
  it('renders all four OpenAI keys', () => {
    const e = encodeChatError(new GatewayError('invalid_request', 'bad n', { param: 'n' }), 'r1');
    expect(e).toEqual({ status: 400, headers: {}, body: { error: { message: 'bad n', type: 'invalid_request_error', param: 'n', code: null } } });
  });

  it.each([
    ['authentication', 401, 'authentication_error', 'invalid_api_key'],
    ['insufficient_balance', 402, 'insufficient_quota', 'insufficient_quota'],
    ['permission', 403, 'permission_error', null],
    ['not_found', 404, 'not_found_error', null],
    ['rate_limit', 429, 'rate_limit_error', null],
    ['api_error', 500, 'server_error', null],
    ['bad_gateway', 502, 'server_error', null],
    ['overloaded', 503, 'server_error', 'overloaded'],
  ] as const)('%s -> %d %s', (kind, status, type, code) => {
    const e = encodeChatError(new GatewayError(kind, 'x'), 'r1');
    expect(e.status).toBe(status);
    expect(e.body).toEqual({ error: { message: 'x', type, param: null, code } });
  });

  it('keeps explicit codes, details and retry-after', () => {
    const nf = encodeChatError(new GatewayError('not_found', 'no such model', { code: 'model_not_found', param: 'model' }), 'r1');
    expect(nf.body).toEqual({ error: { message: 'no such model', type: 'not_found_error', param: 'model', code: 'model_not_found' } });
    const bal = encodeChatError(new GatewayError('insufficient_balance', 'low', { details: { available: 12, message: 'ignored' } }), 'r1');
    expect(bal.body).toEqual({ error: { available: 12, message: 'low', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } });
    const rl = encodeChatError(new GatewayError('rate_limit', 'slow down', { retryAfter: 1.2 }), 'r1');
    expect(rl.headers).toEqual({ 'retry-after': '2' });
  });
});
