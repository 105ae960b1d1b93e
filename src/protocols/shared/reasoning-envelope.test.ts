import { describe, expect, it } from 'vitest';
import type { AssistantPart, Response, StreamEvent } from '../../ir/index.js';
import { GatewayError, runTranslator } from '../../ir/index.js';
import { anthropicMessages } from '../anthropic-messages/index.js';
import { decodeMessagesRequest } from '../anthropic-messages/decode-request.js';
import { openaiChat } from '../openai-chat/index.js';
import { decodeChatRequest } from '../openai-chat/decode-request.js';
import type { EncodeMeta } from '../types.js';
import { baseRequest } from '../../../test/support/ir-fixtures.js';

const meta: EncodeMeta = { requestId: 'req_1', created: 0, requestedModel: 'm', inputTokensEstimate: 1, includeUsage: false, request: baseRequest() };
const usage = { input: { noCache: 1, cacheRead: 0, cacheWrite: 0 }, output: { total: 1, reasoning: 1 } };

/** One reasoning block with a signature, from the given family (opaque: Gemini, a Responses upstream). */
function reasoning(provider: string, opaque: boolean, text = 'thinking'): StreamEvent[] {
  const origin = { provider, model: 'up-1', ...(opaque ? { opaque } : {}) };
  return [
    { type: 'start', id: 'x', model: 'm' },
    { type: 'reasoning-start', id: 'r', origin },
    ...(text ? [{ type: 'reasoning-delta', id: 'r', text } as const] : []),
    { type: 'reasoning-signature', id: 'r', signature: 'SIG+/=' + provider },
    { type: 'reasoning-end', id: 'r' },
    { type: 'finish', attempts: [], finish: { unified: 'stop' }, usage },
  ];
}

/** The thinking block a streaming client assembles, as it sends it back next turn. */
function streamedBlock(adapter: typeof openaiChat | typeof anthropicMessages, events: StreamEvent[]): { thinking: string; signature: string } {
  const frames = runTranslator(adapter.stream, adapter.initStream(meta), events).filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data) as any);
  if (adapter === anthropicMessages) {
    const thinking = frames.filter((f) => f.delta?.type === 'thinking_delta').map((f) => f.delta.thinking).join('');
    const signature = frames.filter((f) => f.delta?.type === 'signature_delta').map((f) => f.delta.signature).join('');
    return { thinking, signature };
  }
  const block = frames.flatMap((f) => f.choices?.[0]?.delta?.thinking_blocks ?? []).at(-1);
  return { thinking: block.thinking, signature: block.signature };
}

/** The reasoning part the gateway reads from a thinking block the client sent back. */
function sentBack(adapter: typeof openaiChat | typeof anthropicMessages, block: { thinking: string; signature: string }): AssistantPart {
  // A chat client sends back what it streamed: reasoning_content beside its thinking_blocks.
  const messages =
    adapter === anthropicMessages
      ? [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'thinking', ...block }, { type: 'text', text: 'a' }] }, { role: 'user', content: 'again' }]
      : [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a', reasoning_content: 'other thoughts', thinking_blocks: [{ type: 'thinking', ...block }] }, { role: 'user', content: 'again' }];
  const req = adapter === anthropicMessages ? decodeMessagesRequest({ model: 'm', max_tokens: 10, messages }, {}) : decodeChatRequest({ model: 'm', messages }, {});
  return req.messages[1].content[0] as AssistantPart;
}

describe('reasoning signatures come back to the provider that made them, through any client protocol', () => {
  for (const adapter of [openaiChat, anthropicMessages]) {
    const name = adapter === openaiChat ? 'chat' : 'messages';

    it(`${name}: an Anthropic signature goes out and comes back as it is, of the Anthropic family`, () => {
      const block = streamedBlock(adapter, reasoning('anthropic', false));
      expect(block).toEqual({ thinking: 'thinking', signature: 'SIG+/=anthropic' });
      expect(sentBack(adapter, block)).toEqual({ type: 'reasoning', text: 'thinking', signature: 'SIG+/=anthropic', origin: { provider: 'anthropic' } });
    });

    it(`${name}: an opaque signature (Gemini's) goes out sealed and comes back with its origin, byte for byte`, () => {
      for (const text of ['thinking', '']) {
        const block = streamedBlock(adapter, reasoning('gemini', true, text));
        expect(block.signature).toMatch(/^swy1\./);
        expect(block.signature).not.toContain('SIG');
        expect(sentBack(adapter, block)).toEqual({ type: 'reasoning', text, signature: 'SIG+/=gemini', origin: { provider: 'gemini', model: 'up-1', opaque: true } });
      }
    });

    it(`${name}: a collected answer seals it the same way`, () => {
      const response: Response = {
        id: 'x', model: 'm', created: 0, usage, finish: { unified: 'stop' }, attempts: [],
        content: [{ type: 'reasoning', text: 't', signature: 'S', origin: { provider: 'openai-responses', opaque: true } }, { type: 'text', text: 'a' }],
      };
      const body = adapter.encodeResponse(response, meta) as any;
      const block = adapter === anthropicMessages ? body.content[0] : body.choices[0].message.thinking_blocks[0];
      expect(sentBack(adapter, { thinking: block.thinking, signature: block.signature })).toMatchObject({ signature: 'S', origin: { provider: 'openai-responses', opaque: true } });
    });

    it(`${name}: a forged or damaged envelope is a 400 naming the field`, () => {
      for (const signature of ['swy1.e30', 'swy1.!!!', 'swy1.' + Buffer.from('{"provider":"gemini","signature":1}').toString('base64url')]) {
        let err: unknown;
        try {
          sentBack(adapter, { thinking: 't', signature });
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(GatewayError);
        expect((err as GatewayError).message).toMatch(/signature is not a reasoning envelope this gateway produced/);
        expect((err as GatewayError).param).toMatch(/signature$/);
      }
    });
  }
});
