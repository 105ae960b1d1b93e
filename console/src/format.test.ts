/** The console's money labels. */
import { describe, expect, it } from 'vitest';
import { dollars } from './format.js';

describe('dollars', () => {
  it('shows cents at least, decimals below a dollar only where they say something', () => {
    expect(dollars(300_000_000)).toBe('$0.30');
    expect(dollars(0)).toBe('$0.00');
    expect(dollars(12_000_000_000)).toBe('$12.00');
    expect(dollars(1_234_567_890_123)).toBe('$1,234.57');
    expect(dollars(123_000)).toBe('$0.000123');
    expect(dollars(4_200_000)).toBe('$0.0042');
    expect(dollars(-50_000_000)).toBe('-$0.05');
  });
});
