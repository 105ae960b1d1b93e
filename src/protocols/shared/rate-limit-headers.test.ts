import { describe, expect, it } from 'vitest';
import { anthropicRateLimitHeaders } from '../anthropic-messages/rate-limit-headers.js';
import { duration, openAIRateLimitHeaders } from './openai-rate-limit-headers.js';

describe('rate-limit headers', () => {
  it("write OpenAI's reset durations in Go's form", () => {
    const cases: Array<[number, string]> = [[0, '0s'], [20, '20ms'], [999.2, '1s'], [1500, '1.5s'], [360_000, '6m0s'], [30_048_000, '8h20m48s']];
    for (const [ms, text] of cases) expect(duration({ resetMs: ms }), String(ms)).toBe(text);
    expect(openAIRateLimitHeaders({ requests: { limit: 60, remaining: 59, resetMs: 1000 } })).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-reset-requests': '1s',
    });
  });

  it("write Anthropic's reset as whole RFC 3339 seconds, never before the bucket is full", () => {
    const now = Date.parse('2026-11-22T10:00:00.900Z');
    const h = anthropicRateLimitHeaders({ tokens: { limit: 1000, remaining: 10, resetMs: 200 } }, now);
    expect(h).toEqual({
      'anthropic-ratelimit-tokens-limit': '1000',
      'anthropic-ratelimit-tokens-remaining': '10',
      'anthropic-ratelimit-tokens-reset': '2026-11-22T10:00:02Z',
    });
  });
});
