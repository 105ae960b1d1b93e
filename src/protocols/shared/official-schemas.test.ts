import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateOfficial, withoutSwitchyardExtensions } from '../../../test/support/official-schemas.js';
import { pathToFileURL } from 'node:url';
import { REFERENCE_PRESENT, TRANSCRIPTS_DIR } from '../../../tools/reference.js';

const T = pathToFileURL(`${TRANSCRIPTS_DIR}/`);
const read = (p: string) => readFileSync(new URL(p, T), 'utf8');
const sseData = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as unknown);

describe.skipIf(!REFERENCE_PRESENT)('validateOfficial', () => {
  it('accepts recorded Anthropic streams and bodies', () => {
    for (const f of ['stream-tool-use.sse', 'stream-thinking.sse', 'stream-redacted-thinking.sse']) {
      for (const ev of sseData(read(`anthropic-messages/${f}`))) {
        expect(validateOfficial('anthropic', 'MessageStreamEvent', ev), f).toEqual([]);
      }
    }
    for (const f of ['message-text.json', 'message-thinking.json', 'message-tool-use.json']) {
      expect(validateOfficial('anthropic', 'Message', JSON.parse(read(`anthropic-messages/${f}`))), f).toEqual([]);
    }
  });

  it('accepts recorded OpenAI chat streams and bodies', () => {
    for (const f of ['stream-text.sse', 'stream-tool-calls-parallel.sse', 'stream-finish-length.sse']) {
      for (const ev of sseData(read(`openai-chat/${f}`))) {
        expect(validateOfficial('openai', 'CreateChatCompletionStreamResponse', ev), f).toEqual([]);
      }
    }
    for (const f of ['completion-text.json', 'completion-tool-calls-parallel.json']) {
      expect(validateOfficial('openai', 'CreateChatCompletionResponse', JSON.parse(read(`openai-chat/${f}`))), f).toEqual([]);
    }
  });

  it('rejects malformed values', () => {
    expect(validateOfficial('anthropic', 'MessageStreamEvent', { type: 'content_block_start', index: 0, content_block: { type: 'fallback' } })).not.toEqual([]);
    expect(validateOfficial('anthropic', 'Message', { type: 'message' })).not.toEqual([]);
    expect(validateOfficial('openai', 'CreateChatCompletionStreamResponse', { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'done' }] })).not.toEqual([]);
    expect(validateOfficial('openai', 'CreateChatCompletionResponse', { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: null, logprobs: null }] })).not.toEqual([]);
  });

  it('strips only switchyard extensions', () => {
    expect(withoutSwitchyardExtensions({ a: 1, switchyard: {}, content: [{ type: 'fallback' }, { type: 'text' }] })).toEqual({ a: 1, content: [{ type: 'text' }] });
    expect(withoutSwitchyardExtensions({ type: 'content_block_start', content_block: { type: 'fallback' } })).toBeUndefined();
  });
});
