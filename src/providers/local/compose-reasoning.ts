/**
 * The local model's reasoning text. Its length follows the request:
 *   budgetTokens set  -> budgetTokens / 4, clamped to [16, 2048] tokens;
 *   otherwise effort  -> low 40, medium 120 (also the default and adaptive), high 360 tokens.
 * The target is approximate (whole sentences); the emitted tokens are counted exactly.
 */
import type { Reasoning } from '../../ir/index.js';
import { countTokens } from '../../util/tokenizer.js';
import { firstWords } from './compose-answer.js';
import { makeRng, shuffled } from './make-seed.js';
import type { Conversation } from './read-conversation.js';

const EFFORT_TOKENS = { low: 40, medium: 120, high: 360 } as const;
export const MIN_REASONING_TOKENS = 16;
export const MAX_REASONING_TOKENS = 2048;

export function reasoningTarget(reasoning: Reasoning): number {
  if (reasoning.budgetTokens !== undefined) {
    const quarter = Math.floor(reasoning.budgetTokens / 4);
    return Math.min(MAX_REASONING_TOKENS, Math.max(MIN_REASONING_TOKENS, quarter));
  }
  return EFFORT_TOKENS[reasoning.effort ?? 'medium'];
}

type Thought = { text: string; when?: (c: Conversation) => boolean };

const OPENERS = ['First,', 'Next,', 'Then', 'Also,', 'On reflection,', 'Meanwhile,', 'Besides,', 'Still,'];
/** Each said at most once, and only where the conversation holds what it talks about. */
const THOUGHTS: readonly Thought[] = [
  { text: 'I should check what is actually being asked', when: (c) => c.lastUserText.trim() !== '' },
  { text: 'the request seems clear enough to answer directly', when: (c) => c.toolOutcomes.length === 0 },
  { text: 'a short answer will serve better than a long one' },
  { text: 'I want to keep the reply consistent with the earlier turns', when: (c) => c.hasEarlierTurns },
  { text: 'there is no need for outside information here', when: (c) => !c.hasTools },
  { text: 'the wording of the question matters for the tone of the reply', when: (c) => c.lastUserText.trim() !== '' },
  { text: 'one of the tools may help, but only if the question needs it', when: (c) => c.hasTools && c.toolOutcomes.length === 0 },
  { text: 'the tool result is what the answer should rest on', when: (c) => c.toolOutcomes.length > 0 },
  { text: 'a failed tool call means I should say what I could not find', when: (c) => c.toolOutcomes.some((o) => o.isError) },
  { text: 'it is worth restating the question to make sure I understood it', when: (c) => c.lastUserText.trim() !== '' },
  { text: 'the system prompt sets the frame for how to reply', when: (c) => c.systemText.trim() !== '' },
  { text: 'the image is part of the question, so I should say what I can about it', when: (c) => c.lastUserImages > 0 },
  { text: 'a deterministic answer is expected from this model' },
  { text: 'plain words will be easier to follow than jargon' },
  { text: 'the answer should fit well within the token ceiling' },
  { text: 'nothing in the request calls for a list or a table' },
  { text: 'a friendly tone suits a message like this one' },
  { text: 'I should not claim anything I cannot back up' },
];

/**
 * "Let me think about ...", then the thoughts that fit the conversation in a seeded order, then each
 * distinct word of the question, then numbered checks: no sentence twice, whatever the target.
 */
export function composeReasoning(conv: Conversation, target: number): string {
  // A different seed from the answer's, so the two texts do not mirror each other.
  const rng = makeRng(conv.seed ^ 0x5bd1e995);
  const topic = conv.toolOutcomes.length > 0
    ? `the result of ${conv.toolOutcomes.map((o) => o.name).join(' and ')}`
    : `"${firstWords(conv.lastUserText.trim() || 'this request', 12)}"`;
  const thoughts = shuffled(rng, THOUGHTS.filter((t) => t.when?.(conv) ?? true));
  const words = [...new Set(conv.lastUserText.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [])];
  const more = (n: number): string => {
    if (n < thoughts.length) return `${OPENERS[n % OPENERS.length]} ${thoughts[n]!.text}.`;
    const w = n - thoughts.length;
    if (w < words.length) return `The word "${words[w]}" is part of what was asked, and the answer should account for it.`;
    return `Check ${w - words.length + 1}: the answer still matches the request.`;
  };
  const sentences = [`Let me think about ${topic}.`];
  let tokens = countTokens(sentences[0] as string);
  for (let n = 0; tokens < target; n++) {
    const s = more(n);
    sentences.push(s);
    tokens += countTokens(` ${s}`);
  }
  return sentences.join(' ');
}
