import { describe, expect, it } from 'vitest';
import { testMeta, testResponse, usage } from '../../../test/support/encoder-fixtures.js';
import { validateOfficial, withoutSwitchyardExtensions } from '../../../test/support/official-schemas.js';
import { encodeMessagesResponse } from './encode-response.js';
import { REFERENCE_PRESENT } from '../../../tools/reference.js';

describe('encodeMessagesResponse', () => {
  it('encodes thinking, redacted thinking, text and tool_use with parsed input', () => {
    const res = testResponse({
      content: [
        { type: 'reasoning', text: 'plan', signature: 'sig==' },
        { type: 'reasoning', text: '', redacted: 'enc' },
        { type: 'text', text: 'Calling', ext: { anthropic: { citations: null } } },
        { type: 'tool-call', id: 'toolu_1', name: 'get', arguments: '{"city":"Paris"}' },
        { type: 'tool-call', id: 'toolu_2', name: 'now', arguments: '' },
        { type: 'tool-call', id: 'toolu_3', name: 'cut', arguments: '{"a":' },
      ],
      finish: { unified: 'tool-calls' },
      usage: usage(10, 20, { cacheRead: 3, cacheWrite: 4 }),
    });
    const body = encodeMessagesResponse(res, testMeta());
    expect(body).toEqual({
      id: 'msg_req1',
      type: 'message',
      role: 'assistant',
      model: 'model-a',
      content: [
        { type: 'thinking', thinking: 'plan', signature: 'sig==' },
        { type: 'redacted_thinking', data: 'enc' },
        { citations: null, type: 'text', text: 'Calling' },
        { type: 'tool_use', id: 'toolu_1', name: 'get', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
        { type: 'tool_use', id: 'toolu_3', name: 'cut', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      // No fallback, no iterations count.
      usage: { input_tokens: 10, cache_creation_input_tokens: 4, cache_read_input_tokens: 3, output_tokens: 20 },
    });
    expect(validateOfficial('anthropic', 'Message', body)).toEqual([]);
  });

  it('fallback: fallback block, final model, iterations = attempts, refusal details kept', () => {
    const res = testResponse({
      model: 'model-b',
      content: [
        { type: 'fallback', from: 'model-a', to: 'model-b', reason: 'refusal' },
        { type: 'text', text: 'Sure.' },
      ],
      attempts: [
        { model: 'model-a', outcome: 'refusal' },
        { model: 'model-b', outcome: 'ok' },
      ],
    });
    const body = encodeMessagesResponse(res, testMeta()) as Record<string, unknown>;
    expect(body.model).toBe('model-b');
    expect(body.content).toEqual([
      { type: 'fallback', from: 'model-a', to: 'model-b', reason: 'refusal' },
      { type: 'text', text: 'Sure.' },
    ]);
    expect((body.usage as { iterations: number }).iterations).toBe(2);
    expect(validateOfficial('anthropic', 'Message', withoutSwitchyardExtensions(body))).toEqual([]);
    // The fallback block is ours: the official schema (when present) does not know it.
    if (REFERENCE_PRESENT) expect(validateOfficial('anthropic', 'Message', body)).not.toEqual([]);
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool-calls', 'tool_use'],
    ['stop-sequence', 'stop_sequence'],
    ['refusal', 'refusal'],
    ['pause', 'pause_turn'],
    ['other', 'end_turn'],
  ] as const)('finish %s -> %s', (unified, reason) => {
    const body = encodeMessagesResponse(testResponse({ finish: { unified } }), testMeta()) as Record<string, unknown>;
    expect(body.stop_reason).toBe(reason);
    expect(validateOfficial('anthropic', 'Message', body)).toEqual([]);
  });

  it('stop_sequence and stop_details', () => {
    const s = encodeMessagesResponse(testResponse({ finish: { unified: 'stop-sequence', stopSequence: 'END' } }), testMeta()) as Record<string, unknown>;
    expect(s.stop_sequence).toBe('END');
    const details = { type: 'refusal', category: 'cyber', explanation: 'no' };
    const r = encodeMessagesResponse(testResponse({ finish: { unified: 'refusal', details } }), testMeta()) as Record<string, unknown>;
    expect(r.stop_details).toEqual(details);
    expect(validateOfficial('anthropic', 'Message', r)).toEqual([]);
  });
});
