import { describe, expect, it } from 'vitest';
import { redactor } from './redact.js';

describe('redactor', () => {
  it('removes every secret, the longest first, and leaves short strings and other text alone', () => {
    const redact = redactor(['sk-provider-1234567890', 'sk-provider-1234567890-extended', 'short', undefined]);
    expect(redact('key sk-provider-1234567890-extended and sk-provider-1234567890, twice: sk-provider-1234567890')).toBe(
      'key [redacted] and [redacted], twice: [redacted]',
    );
    expect(redact('a short text')).toBe('a short text');
  });
});
