import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../ir/index.js';
import { runTranslator } from '../../ir/index.js';
import { anthropicMessages } from '../anthropic-messages/index.js';
import { openaiChat } from '../openai-chat/index.js';
import type { EncodeMeta } from '../types.js';
import { baseRequest } from '../../../test/support/ir-fixtures.js';

const meta: EncodeMeta = { requestId: 'req_1', created: 0, requestedModel: 'm', inputTokensEstimate: 1, includeUsage: false, request: baseRequest() };

/** One reasoning block with a signature, from the given family (opaque: Responses encrypted_content). */
function reasoning(provider: string, opaque = false): StreamEvent[] {
  return [
    { type: 'start', id: 'x', model: 'm' },
    { type: 'reasoning-start', id: 'r', origin: { provider, ...(opaque ? { opaque } : {}) } },
    { type: 'reasoning-delta', id: 'r', text: 'thinking' },
    { type: 'reasoning-signature', id: 'r', signature: 'SIG-' + provider },
    { type: 'reasoning-end', id: 'r' },
    { type: 'finish', finish: { unified: 'stop' }, usage: { input: { noCache: 1, cacheRead: 0, cacheWrite: 0 }, output: { total: 1, reasoning: 1 } } },
  ];
}

function wire(adapter: typeof openaiChat | typeof anthropicMessages, provider: string, opaque = false): string {
  return runTranslator(adapter.stream, adapter.initStream(meta), reasoning(provider, opaque)).map((f) => f.data).join('\n');
}

describe('signatures only travel where they can come back safely', () => {
  it('passes Anthropic and local signatures to chat and messages clients', () => {
    for (const adapter of [openaiChat, anthropicMessages]) {
      expect(wire(adapter, 'anthropic')).toContain('SIG-anthropic');
      expect(wire(adapter, 'local')).toContain('SIG-local');
    }
  });

  it('withholds another provider\'s opaque reasoning (a Responses upstream\'s encrypted_content)', () => {
    for (const adapter of [openaiChat, anthropicMessages]) {
      const text = wire(adapter, 'openai-responses', true);
      expect(text).toContain('thinking');
      expect(text).not.toContain('SIG-openai-responses');
    }
  });
});
