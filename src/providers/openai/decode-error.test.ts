import { describe, expect, it } from 'vitest';
import { decodeError as openaiError } from './decode-error.js';
import { decodeChatStream, initChatStream } from './decode-stream.js';

const now = Date.parse('2026-01-01T00:00:00Z');

describe('openai decode-error', () => {
  it('maps Azure prompt filter 400 to invalid_request with code content_filter', () => {
    const e = openaiError({ status: 400, headers: {}, body: { error: { code: 'content_filter', param: 'prompt', status: 400, message: 'filtered' } }, nowMs: now });
    expect(e).toMatchObject({ kind: 'invalid_request', code: 'content_filter', param: 'prompt', retryable: false, status: 400 });
  });

  it('never blames the client key on 401', () => {
    const e = openaiError({ status: 401, headers: {}, body: { error: { message: 'Incorrect API key provided: sk-abc', type: 'invalid_request_error', code: 'invalid_api_key' } }, nowMs: now });
    expect(e.kind).toBe('authentication');
    expect(e.message).toBe("upstream rejected the gateway's credentials");
    expect(e.message).not.toContain('sk-abc');
  });

  it.each([
    [403, 'permission', false],
    [404, 'not_found', false],
    [429, 'rate_limit', true],
    [500, 'api_error', true],
    [502, 'bad_gateway', true],
    [503, 'unavailable', true],
    [529, 'overloaded', true],
  ])('status %i -> %s (retryable %s)', (status, kind, retryable) => {
    const e = openaiError({ status, headers: {}, body: { error: { message: 'x', type: 't', param: null, code: null } }, nowMs: now });
    expect(e).toMatchObject({ kind, retryable });
  });

  it('reads retry-after as seconds, milliseconds or a date', () => {
    const body = { error: { message: 'slow down' } };
    expect(openaiError({ status: 429, headers: { 'retry-after': '7' }, body, nowMs: now }).retryAfter).toBe(7);
    expect(openaiError({ status: 429, headers: { 'retry-after-ms': '1500' }, body, nowMs: now }).retryAfter).toBe(1.5);
    expect(openaiError({ status: 429, headers: { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, body, nowMs: now }).retryAfter).toBe(30);
  });

  it('throws the decoded error for an in-stream {"error":...} payload', () => {
    expect(() => decodeChatStream.step(initChatStream(), { data: '{"error":{"message":"boom","type":"server_error","code":null}}' })).toThrow(
      expect.objectContaining({ kind: 'api_error', message: 'boom', retryable: true }),
    );
  });

  it('keeps a non-JSON error body as the message', () => {
    expect(openaiError({ status: 502, headers: {}, body: '<html>Bad Gateway</html>', nowMs: now }).message).toContain('Bad Gateway');
  });
});
