import { describe, expect, it } from 'vitest';
import { chatCompletionId, messageId } from './ids.js';
import { extOf, parseToolInput, restOf } from './json.js';

describe('json helpers', () => {
  it('parseToolInput: objects pass, empty/invalid/non-object become {}', () => {
    expect(parseToolInput('{"a":[1]}')).toEqual({ a: [1] });
    expect(parseToolInput('')).toEqual({});
    expect(parseToolInput('  ')).toEqual({});
    expect(parseToolInput('{"a":')).toEqual({});
    expect(parseToolInput('[1]')).toEqual({});
  });

  it('restOf/extOf', () => {
    expect(restOf({ a: 1, b: 2, c: undefined }, ['a'])).toEqual({ b: 2 });
    expect(restOf({ a: 1 }, ['a'])).toBeUndefined();
    expect(extOf('openai-chat', undefined)).toEqual({});
    expect(extOf('openai-chat', { x: 1 })).toEqual({ ext: { 'openai-chat': { x: 1 } } });
  });

  it('ids derive from the request id', () => {
    expect(chatCompletionId('abc')).toBe('chatcmpl-abc');
    expect(chatCompletionId('chatcmpl-abc')).toBe('chatcmpl-abc');
    expect(messageId('abc')).toBe('msg_abc');
  });
});
