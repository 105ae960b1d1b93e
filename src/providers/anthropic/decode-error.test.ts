import { describe, expect, it } from 'vitest';
import { decodeError as anthropicError } from './decode-error.js';
import { decodeMessagesStream, initMessagesStream } from './decode-stream.js';

const now = Date.parse('2026-01-01T00:00:00Z');

describe('anthropic decode-error', () => {
  it('maps overloaded 529 and rate limit 429 with retry-after', () => {
    const o = anthropicError({ status: 529, headers: {}, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, nowMs: now });
    expect(o).toMatchObject({ kind: 'overloaded', status: 529, retryable: true, code: 'overloaded_error' });
    const r = anthropicError({ status: 429, headers: { 'retry-after': '12' }, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow' } }, nowMs: now });
    expect(r).toMatchObject({ kind: 'rate_limit', retryAfter: 12, retryable: true });
    const a = anthropicError({ status: 401, headers: {}, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }, nowMs: now });
    expect(a).toMatchObject({ kind: 'authentication', message: "upstream rejected the gateway's credentials", retryable: false });
  });

  it('throws overloaded for an in-stream error event', () => {
    const sse = { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' };
    expect(() => decodeMessagesStream.step(initMessagesStream(), sse)).toThrow(expect.objectContaining({ kind: 'overloaded', status: 529 }));
  });

  it('throws bad_gateway on malformed event JSON', () => {
    expect(() => decodeMessagesStream.step(initMessagesStream(), { event: 'message_start', data: '{"type":' })).toThrow(
      expect.objectContaining({ kind: 'bad_gateway' }),
    );
  });
});
