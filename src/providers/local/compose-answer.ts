/**
 * The local model's answer text: it echoes the user (or the tool results), mentions the system
 * prompt, and pads with deterministic filler, no sentence twice, to a streamable length (about
 * 60-120 tokens).
 */
import { countTokens } from '../../util/tokenizer.js';
import type { Conversation } from './read-conversation.js';
import { makeRng, shuffled } from './make-seed.js';

/** Filler sentences, each said at most once in an answer, and only where it is true of this call. */
const FILLER: ReadonlyArray<{ text: string; when?: (c: Conversation) => boolean }> = [
  { text: 'This answer comes from a local model that runs inside the gateway.' },
  { text: 'It is deterministic, so the same conversation always produces the same words.' },
  { text: 'Each token is streamed on its own, which makes it useful for testing clients.', when: (c) => c.streamed },
  { text: 'The whole answer was generated before it was sent, as you asked for no stream.', when: (c) => !c.streamed },
  { text: 'Usage is counted with the same tokenizer that the gateway uses for its holds.' },
  { text: 'Nothing here was sent to an external provider.' },
  { text: 'The text is assembled from a small set of sentences chosen by a hash of the conversation.' },
  { text: 'A real model would reason about the request; this one only reflects it back.' },
  { text: 'You can ask for tools, reasoning or a lower token ceiling to see other behaviour.', when: (c) => !c.hasTools },
  { text: 'Stop sequences, refusals and disconnects are handled just as a hosted model would.' },
  { text: 'The pace of the stream follows the tokens per second set in the catalog.', when: (c) => c.streamed },
  { text: 'Longer conversations change the seed, and with it the choice of these sentences.' },
  { text: 'Every reply ends cleanly with a finish reason and a usage report.' },
  { text: 'In short, the gateway is working and the round trip is complete.' },
  { text: 'If you are reading this in a terminal, the stream reached you token by token.', when: (c) => c.streamed },
];

export const MIN_ANSWER_TOKENS = 60;
export const MAX_ANSWER_TOKENS = 120;

/** The echo, then filler sentences in a seeded order, none twice, until about the seeded length. */
export function composeAnswer(conv: Conversation): string {
  const rng = makeRng(conv.seed);
  const sentences: string[] = [];
  if (conv.toolOutcomes.length > 0) {
    for (const o of conv.toolOutcomes) sentences.push(describeOutcome(o.name, o.text, o.isError));
  } else {
    sentences.push(echoUser(conv));
  }
  if (conv.systemText.trim()) sentences.push(`I am following the system prompt ("${firstWords(conv.systemText, 12)}").`);
  const target = MIN_ANSWER_TOKENS + Math.floor(rng() * (MAX_ANSWER_TOKENS - MIN_ANSWER_TOKENS));
  // Summing per-sentence counts is close enough to steer the length; usage is exact anyway.
  let tokens = sentences.reduce((n, s) => n + countTokens(` ${s}`), 0);
  const filler = shuffled(rng, FILLER.filter((f) => f.when?.(conv) ?? true));
  for (const { text } of filler) {
    if (tokens >= target) break;
    sentences.push(text);
    tokens += countTokens(` ${text}`);
  }
  return sentences.join(' ');
}

function echoUser(conv: Conversation): string {
  const text = conv.lastUserText.trim();
  if (text) return `You said: "${firstWords(text, 40)}".`;
  if (conv.lastUserImages > 0) return `You sent ${conv.lastUserImages === 1 ? 'an image' : `${conv.lastUserImages} images`}.`;
  return 'You said nothing.';
}

function describeOutcome(name: string, text: string, isError: boolean): string {
  const result = text ? firstWords(text, 60) : '(nothing)';
  const stop = /[.!?]$/.test(result) ? '' : '.';
  const follow = isError ? 'That call failed, so I cannot rely on its result.' : 'Based on that result, here is my answer.';
  return `The ${name} tool returned: ${result}${stop} ${follow}`;
}

/** The first `n` words, with an ellipsis when there were more. */
export function firstWords(text: string, n: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, n).join(' ') + (words.length > n ? ' ...' : '');
}
