import { describe, expect, it } from 'vitest';
import { testMeta, testResponse, usage } from '../../../test/support/encoder-fixtures.js';
import { validateOfficial, withoutSwitchyardExtensions } from '../../../test/support/official-schemas.js';
import { encodeChatResponse } from './encode-response.js';

describe('encodeChatResponse', () => {
  it('encodes text, reasoning, signed thinking blocks and tool calls', () => {
    const res = testResponse({
      content: [
        { type: 'reasoning', text: 'hmm', signature: 'sig==' },
        { type: 'reasoning', text: '', redacted: 'opaque' },
        { type: 'text', text: 'Hello' },
        { type: 'text', text: ' world' },
        { type: 'tool-call', id: 'call_1', name: 'get', arguments: '{"q":1}' },
      ],
      finish: { unified: 'tool-calls' },
      usage: usage(10, 7, { cacheRead: 3, cacheWrite: 2, reasoning: 4 }),
    });
    const body = encodeChatResponse(res, testMeta()) as Record<string, unknown>;
    expect(body).toEqual({
      id: 'chatcmpl-req1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'model-a',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hello world',
            refusal: null,
            reasoning_content: 'hmm',
            thinking_blocks: [
              { type: 'thinking', thinking: 'hmm', signature: 'sig==' },
              { type: 'redacted_thinking', data: 'opaque' },
            ],
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"q":1}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 15,
        completion_tokens: 7,
        total_tokens: 22,
        prompt_tokens_details: { cached_tokens: 3 },
        completion_tokens_details: { reasoning_tokens: 4 },
      },
      switchyard: { attempts: [{ model: 'model-a', outcome: 'ok' }], served_variant: 'standard' },
    });
    expect(validateOfficial('openai', 'CreateChatCompletionResponse', withoutSwitchyardExtensions(body))).toEqual([]);
  });

  it('content is null without text; fallback parts are not content; attempts reported', () => {
    const res = testResponse({
      model: 'model-b',
      content: [{ type: 'fallback', from: 'model-a', to: 'model-b', reason: 'refusal' }],
      attempts: [
        { model: 'model-a', outcome: 'refusal', reason: 'cyber' },
        { model: 'model-b', outcome: 'ok' },
      ],
      servedVariant: 'fast',
    });
    const body = encodeChatResponse(res, testMeta());
    expect(body.model).toBe('model-b');
    expect(body.choices[0].message).toEqual({ role: 'assistant', content: null, refusal: null });
    expect(body.switchyard).toEqual({ attempts: res.attempts, served_variant: 'fast' });
    expect(validateOfficial('openai', 'CreateChatCompletionResponse', body)).toEqual([]);
  });

  it.each([
    ['stop', 'stop'],
    ['stop-sequence', 'stop'],
    ['pause', 'stop'],
    ['other', 'stop'],
    ['length', 'length'],
    ['tool-calls', 'tool_calls'],
    ['refusal', 'content_filter'],
  ] as const)('finish %s -> %s', (unified, reason) => {
    const body = encodeChatResponse(testResponse({ finish: { unified } }), testMeta());
    expect(body.choices[0].finish_reason).toBe(reason);
  });

  it('a refusal carries the explanation in message.refusal', () => {
    const res = testResponse({ finish: { unified: 'refusal', details: { type: 'refusal', category: 'cyber', explanation: 'Refused by policy.' } } });
    const body = encodeChatResponse(res, testMeta());
    expect(body.choices[0].message.refusal).toBe('Refused by policy.');
  });
});
