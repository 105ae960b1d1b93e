import { describe, expect, it } from 'vitest';
import { baseRequest } from '../../test/support/ir-fixtures.js';
import type { Request } from '../ir/index.js';
import {
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  REPLY_PRIMING_TOKENS,
  TOOL_OVERHEAD_TOKENS,
  TOOL_PART_OVERHEAD_TOKENS,
  countRequestTokens,
  countTokens,
  decodeTokens,
  encodeText,
  tokenPieces,
} from './tokenizer.js';

function request(over: Partial<Request> = {}): Request {
  return baseRequest({ model: 'm', messages: [], maxTokens: 100, ...over });
}

describe('countTokens / encodeText / decodeTokens', () => {
  it('counts with o200k_base', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(encodeText('hello world')).toEqual([24912, 2375]);
  });

  it('treats special-token text as plain text instead of throwing', () => {
    const n = countTokens('a <|endoftext|> b');
    expect(n).toBeGreaterThan(3);
    expect(decodeTokens(encodeText('a <|endoftext|> b'))).toBe('a <|endoftext|> b');
  });

  it('round-trips unicode and a partial character does not leak into the next decode', () => {
    const s = '𝔘𝔫 日本語 🎉 é';
    const ids = encodeText(s);
    expect(decodeTokens(ids)).toBe(s);
    expect(decodeTokens(ids.slice(0, 1))).toMatch(/\uFFFD/);
    expect(decodeTokens(encodeText('plain'))).toBe('plain');
  });
});

describe('tokenPieces', () => {
  it('pieces concatenate to the text and their tokens sum to the count', () => {
    for (const s of ['Hello there, friend.', '𝔘𝔫𝔦 日本語のテキスト 🎉🎉 é', '{"city":"Paris"}', '']) {
      const pieces = tokenPieces(s);
      expect(pieces.map((p) => p.text).join('')).toBe(s);
      expect(pieces.reduce((a, p) => a + p.tokens, 0)).toBe(countTokens(s));
      for (const p of pieces) expect(p.text).not.toMatch(/\uFFFD/);
    }
  });

  it('gives one piece per token for ASCII text', () => {
    const pieces = tokenPieces('The quick brown fox');
    expect(pieces.every((p) => p.tokens === 1)).toBe(true);
    expect(pieces).toHaveLength(4);
  });
});

describe('countRequestTokens', () => {
  it('counts overheads only for an empty request', () => {
    expect(countRequestTokens(request())).toBe(REPLY_PRIMING_TOKENS);
  });

  it('adds system, every part kind and tools', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const req = request({
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is the weather?' },
            { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Think.' },
            { type: 'tool-call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'fallback', from: 'a', to: 'b', reason: 'refusal' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'sunny' }] }] },
      ],
      tools: [{ name: 'get_weather', description: 'Get the weather', inputSchema: schema }],
    });
    const expected =
      REPLY_PRIMING_TOKENS +
      MESSAGE_OVERHEAD_TOKENS + countTokens('Be brief.') +
      MESSAGE_OVERHEAD_TOKENS + countTokens('What is the weather?') + IMAGE_TOKENS +
      MESSAGE_OVERHEAD_TOKENS + countTokens('Think.') +
      TOOL_PART_OVERHEAD_TOKENS + countTokens('get_weather') + countTokens('{"city":"Paris"}') +
      MESSAGE_OVERHEAD_TOKENS + TOOL_PART_OVERHEAD_TOKENS + countTokens('sunny') +
      TOOL_OVERHEAD_TOKENS + countTokens('get_weather') + countTokens('Get the weather') + countTokens(JSON.stringify(schema));
    expect(countRequestTokens(req)).toBe(expected);
  });

  it('counts 100 KB of text quickly', () => {
    const words = Array.from({ length: 20000 }, (_, i) => `w${(i * 7919) % 5000}`).join(' ');
    const text = words.slice(0, 100_000);
    const req = request({ messages: [{ role: 'user', content: [{ type: 'text', text }] }] });
    const t0 = performance.now();
    const n = countRequestTokens(req);
    const ms = performance.now() - t0;
    expect(n).toBeGreaterThan(10_000);
    // Typically ~10 ms cold; the bound only catches pathological (quadratic) behaviour.
    expect(ms).toBeLessThan(1000);
  });
});

describe('countRequestTokensAsync', () => {
  it('counts large prompts in slices to exactly the synchronous count (word-boundary cuts)', async () => {
    const { countRequestTokens, countRequestTokensAsync } = await import('./tokenizer.js');
    const words = 'Switchyard routes every request through holds, attempts and settlement. '.repeat(6000); // ~430 KB
    const req = baseRequest({ system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: words }] }] });
    expect(await countRequestTokensAsync(req)).toBe(countRequestTokens(req));
  });

  it('stops once the count passes stopAbove', async () => {
    const { countRequestTokens, countRequestTokensAsync } = await import('./tokenizer.js');
    const req = baseRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'lorem ipsum dolor sit amet '.repeat(40000) }] }] });
    const partial = await countRequestTokensAsync(req, 1000);
    expect(partial).toBeGreaterThan(1000);
    expect(partial).toBeLessThan(countRequestTokens(req) / 2);
  });

  it('lets other work run while it counts', async () => {
    const { countRequestTokensAsync } = await import('./tokenizer.js');
    const req = baseRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'lorem ipsum dolor sit amet '.repeat(20000) }] }] });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    await countRequestTokensAsync(req);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
  });
});

describe('runs without spaces', () => {
  it.each([
    ['repeated letters', 'x'.repeat(70_000)],
    ['base64-like noise around words', `see ${'QUJD'.repeat(5_000)}= and ${'😀'.repeat(300)} then words`],
  ])('%s: counted in bounded segments; pieces still join to the text and add up to the count', async (_name, text) => {
    const { countTokens, encodeText, tokenPieces } = await import('./tokenizer.js');
    const pieces = tokenPieces(text);
    expect(pieces.map((p) => p.text).join('')).toBe(text);
    expect(pieces.reduce((n, p) => n + p.tokens, 0)).toBe(countTokens(text));
    expect(encodeText(text)).toHaveLength(countTokens(text));
  });
});
