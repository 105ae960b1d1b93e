/**
 * What the local models say: no sentence twice in an answer or its reasoning, whatever the seed or
 * the reasoning budget, and only about what the conversation holds (no tools talked about when none
 * were sent, no earlier turns, system prompt or stream when there are none).
 */
import { describe, expect, it } from 'vitest';
import type { Request } from '../../ir/index.js';
import { makeCall, makeRequest, run } from '../../../test/support/local-call.js';

const QUESTIONS = Array.from({ length: 12 }, (_, i) => `Question ${i}: what should I know about topic number ${i * 7}?`);
const sentencesOf = (text: string) => text.split(/(?<=[.!?])\s+/).filter(Boolean);

async function say(over: Partial<Request>): Promise<{ reasoning: string; text: string }> {
  const { result } = await run(makeCall(makeRequest(over), { upstreamModel: 'local-opus' }));
  const blocks = result.content;
  const of = (type: string) => blocks.filter((b: { type: string }) => b.type === type).map((b: any) => b.text).join('');
  return { reasoning: of('reasoning'), text: of('text') };
}

describe('local model text', () => {
  it('never repeats a sentence, in the answer or in reasoning at the largest budget', async () => {
    for (const q of QUESTIONS) {
      const { reasoning, text } = await say({
        maxTokens: 16_000,
        reasoning: { enabled: true, budgetTokens: 10_000 },
        messages: [{ role: 'user', content: [{ type: 'text', text: q }] }],
      });
      for (const t of [reasoning, text]) {
        const sentences = sentencesOf(t);
        expect(sentences.length).toBeGreaterThan(2);
        expect(sentences.filter((s, i) => sentences.indexOf(s) !== i), q).toEqual([]);
      }
    }
  });

  it('talks only about what the conversation holds', async () => {
    for (const q of QUESTIONS) {
      const { reasoning, text } = await say({
        stream: false,
        reasoning: { enabled: true, effort: 'high' },
        messages: [{ role: 'user', content: [{ type: 'text', text: q }] }],
      });
      const said = `${reasoning} ${text}`;
      // The one sentence naming tools without any is the offer of what else to try.
      expect(said.replace('You can ask for tools, reasoning', ''), q).not.toMatch(/\btools?\b/i);
      expect(said, q).not.toMatch(/earlier turns|system prompt|token by token|pace of the stream|streamed on its own/i);
    }
    const withTools = await say({
      reasoning: { enabled: true, effort: 'high' },
      tools: [{ name: 'lookup', description: 'Looks things up', inputSchema: { type: 'object' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
    });
    expect(withTools.reasoning).toMatch(/tools may help/);
  });
});
