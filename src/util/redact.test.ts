import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createScrubber, logRedaction, redactor, scrubAttributes } from './redact.js';

describe('redactor', () => {
  it('removes every secret, the longest first, and leaves short strings and other text alone', () => {
    const redact = redactor(['sk-provider-1234567890', 'sk-provider-1234567890-extended', 'short', undefined]);
    expect(redact('key sk-provider-1234567890-extended and sk-provider-1234567890, twice: sk-provider-1234567890')).toBe(
      'key [redacted] and [redacted], twice: [redacted]',
    );
    expect(redact('a short text')).toBe('a short text');
  });
});

describe('createScrubber', () => {
  const scrub = createScrubber(() => ['operator-secret-value-42']);

  it('replaces known secrets and every credential shape, keeping what names them', () => {
    const cases: Array<[string, string]> = [
      ['refused; authorization=Bearer sk-provider-abcdef0123456789 x-api-key=sk-ant-api03-abcdefghijkl', 'refused; authorization=Bearer [redacted] x-api-key=[redacted]'],
      ['GET https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?alt=sse&key=AIzaSyA1234567890abcdefghijklmnopqrstu', 'GET https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?alt=sse&key=[redacted]'],
      ['connect postgres://app:hunter2-pass@db:5432/ledger failed', 'connect postgres://app:[redacted]@db:5432/ledger failed'],
      ['client key sk-sy-0123456789abcdef0123 revoked', 'client key [redacted] revoked'],
      ['token ya29.a0AfH6SMBxxxxxxxxxxxxxxx and AKIAIOSFODNN7EXAMPLE', 'token [redacted] and [redacted]'],
      ['{"api_key": "abcdef123456"}', '{"api_key": "[redacted]"}'],
      ['Basic dXNlcjpwYXNzd29yZA==', 'Basic [redacted]'],
      ['jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLWJ5dGVz refused', 'jwt [redacted] refused'],
      ['the operator-secret-value-42 leaked', 'the [redacted] leaked'],
      // Shapes that only a `token` name announces (the prefilter must let each through).
      ['refresh failed: access_token=abcdef123456', 'refresh failed: access_token=[redacted]'],
      ['{"refresh_token" : "abcdef123456"}', '{"refresh_token" : "[redacted]"}'],
      ['GET https://example.test/stream?alt=sse&token=abcdef123456', 'GET https://example.test/stream?alt=sse&token=[redacted]'],
      ['{"inputTokens":17,"outputTokens":20}', '{"inputTokens":17,"outputTokens":20}'],
      ['request req_0123 for model claude-sonnet-4-5 took 120 ms (keyId key_abc)', 'request req_0123 for model claude-sonnet-4-5 took 120 ms (keyId key_abc)'],
    ];
    for (const [input, output] of cases) expect(scrub.text(input)).toBe(output);
  });

  it('walks values: credential-named fields, errors with their causes and own fields, URLs, cycles', () => {
    const cause = Object.assign(new Error('upstream said: Bearer sk-provider-abcdef0123456789'), { code: 'E_UP' });
    const err = Object.assign(new Error('request failed: x-api-key=operator-secret-value-42', { cause }), {
      url: new URL('https://example.test/v1?key=AIzaSyA1234567890abcdefghijklmnopqrstu'),
      headers: { authorization: 'Bearer whatever-token-1234', 'x-goog-api-key': 'AIza-not-a-real-key-but-a-key', accept: 'application/json' },
    });
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    const out = JSON.stringify(scrub.value({ err, loop, n: 3n }));
    expect(out).not.toMatch(/sk-provider|operator-secret|AIza|whatever-token/);
    const parsed = JSON.parse(out);
    expect(parsed.err).toMatchObject({ type: 'Error', message: 'request failed: x-api-key=[redacted]', cause: { code: 'E_UP', message: 'upstream said: Bearer [redacted]' } });
    expect(parsed.err.headers).toEqual({ authorization: '[redacted]', 'x-goog-api-key': '[redacted]', accept: 'application/json' });
    expect(parsed.loop.self).toBe('[circular]');
    expect(parsed.n).toBe('3');
    expect(scrubAttributes(scrub, { 'http.request.header.authorization': 'Bearer abcdefghijkl', 'gen_ai.request.model': 'm' })).toEqual({
      'http.request.header.authorization': 'Bearer [redacted]',
      'gen_ai.request.model': 'm',
    });
  });

  it('asks for the secrets again when the list changes (a reloaded catalog)', () => {
    let list = ['first-secret-0001'];
    const s = createScrubber(() => list);
    expect(s.text('first-secret-0001 second-secret-0002')).toBe('[redacted] second-secret-0002');
    list = ['second-secret-0002'];
    expect(s.text('first-secret-0001 second-secret-0002')).toBe('first-secret-0001 [redacted]');
  });
});

describe('logRedaction', () => {
  it('a pino logger with it writes no credential, in the message taken from an error either', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const log = pino({ level: 'debug', ...logRedaction(createScrubber(() => ['operator-secret-value-42'])) }, sink);
    log.error(new Error('echo: authorization=Bearer sk-provider-abcdef0123456789'));
    log.warn({ err: new Error('x', { cause: new Error('operator-secret-value-42') }), headers: { 'x-api-key': 'sk-ant-whatever-000000' } }, 'failed with operator-secret-value-42');
    const text = lines.join('');
    expect(lines).toHaveLength(2);
    for (const line of lines) JSON.parse(line);
    expect(text).not.toMatch(/sk-provider|operator-secret|sk-ant/);
    expect(text).toContain('echo: authorization=Bearer [redacted]');
  });
});
