/**
 * The local model's reasoning text. Its length follows the request:
 *   budgetTokens set  -> budgetTokens / 4, clamped to [16, 2048] tokens;
 *   otherwise effort  -> low 40, medium 120 (also the default and adaptive), high 360 tokens.
 * The target is approximate (whole sentences); the emitted tokens are counted exactly.
 */
import type { Reasoning } from '../../ir/index.js';
import { countTokens } from '../../util/tokenizer.js';
import { firstWords } from './compose-answer.js';
import { makeRng, pick } from './make-seed.js';
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

const OPENERS = ['First,', 'Next,', 'Then', 'Also,', 'On reflection,', 'Finally,', 'Meanwhile,'];
const THOUGHTS = [
  'I should check what is actually being asked',
  'the request seems clear enough to answer directly',
  'a short answer will serve better than a long one',
  'I want to keep the reply consistent with the earlier turns',
  'there is no need for outside information here',
  'the wording of the question matters for the tone of the reply',
  'I could mention the tools, but only if they help',
  'it is worth restating the question to make sure I understood it',
  'the system prompt sets the frame for how to reply',
  'a deterministic answer is expected from this model',
];

export function composeReasoning(conv: Conversation, target: number): string {
  // A different seed from the answer's, so the two texts do not mirror each other.
  const rng = makeRng(conv.seed ^ 0x5bd1e995);
  const topic = conv.toolOutcomes.length > 0
    ? `the result of ${conv.toolOutcomes.map((o) => o.name).join(' and ')}`
    : `"${firstWords(conv.lastUserText.trim() || 'this request', 12)}"`;
  const sentences = [`Let me think about ${topic}.`];
  let tokens = countTokens(sentences[0] as string);
  while (tokens < target) {
    const s = `${pick(rng, OPENERS)} ${pick(rng, THOUGHTS)}.`;
    sentences.push(s);
    tokens += countTokens(` ${s}`);
  }
  return sentences.join(' ');
}
