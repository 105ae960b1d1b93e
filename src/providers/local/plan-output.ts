/**
 * What the local model will say, decided up front and purely from the call: the blocks in order
 * and the finish. `generate` then streams the plan token by token under the output ceiling.
 *
 * Raw finish reasons use the messages vocabulary (`end_turn`, `tool_use`, ...), since the local
 * models stand in for Claude-like models; the unified reason is what encoders use.
 */
import type { Finish } from '../../ir/index.js';
import type { ProviderCall } from '../types.js';
import { composeAnswer } from './compose-answer.js';
import { composeReasoning, reasoningTarget } from './compose-reasoning.js';
import { deriveId } from './make-seed.js';
import { pickToolCalls, userStrings } from './pick-tool-call.js';
import { argsForSchema } from './schema-args.js';
import { readConversation, type Conversation } from './read-conversation.js';

export type PlannedBlock =
  | { kind: 'reasoning'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'tool'; toolCallId: string; name: string; json: string };

export interface Plan {
  blocks: PlannedBlock[];
  finish: Finish;
}

/** Text a late-refusing model streams before its classifier stops it. */
export const LATE_REFUSAL_PREFIX = 'I can start on this, but after looking more closely';

export const REFUSAL_FINISH: Finish = {
  unified: 'refusal',
  raw: 'refusal',
  details: {
    type: 'refusal',
    category: null,
    explanation: 'The local model refused this request (refusal test trigger).',
  },
};

/**
 * Local Haiku stands in for a model without a refusal classifier: it answers the trigger like
 * any text, so the built-in chains (opus -> sonnet -> haiku) end in an answer and a refusal
 * fallback can be seen with `make run` alone.
 */
export function hasRefusalClassifier(upstreamModel: string): boolean {
  return !upstreamModel.startsWith('local-haiku');
}

export function planOutput(call: ProviderCall): Plan {
  const { request } = call;
  const conv = readConversation(request, call.clientStreams);
  if (conv.refusalTriggered && hasRefusalClassifier(call.target.upstreamModel)) {
    // A model marked `late-refusal` streams a little before the classifier cuts in.
    const late = call.target.upstreamModel.includes('late-refusal');
    return { blocks: late ? [{ kind: 'text', text: LATE_REFUSAL_PREFIX }] : [], finish: REFUSAL_FINISH };
  }
  const blocks: PlannedBlock[] = [];
  if (request.reasoning.enabled) {
    blocks.push({ kind: 'reasoning', text: composeReasoning(conv, reasoningTarget(request.reasoning)) });
  }
  const calls = pickToolCalls(request, conv);
  let finish: Finish;
  if (calls.length > 0) {
    blocks.push({ kind: 'text', text: `I'll call ${calls.map((c) => c.name).join(' and ')}.` });
    calls.forEach((c, i) =>
      blocks.push({ kind: 'tool', toolCallId: deriveId('toolu_local_', call.requestId, i), name: c.name, json: c.arguments }),
    );
    finish = { unified: 'tool-calls', raw: 'tool_use' };
  } else {
    blocks.push({ kind: 'text', text: request.responseFormat ? composeJson(request, conv) : composeAnswer(conv) });
    finish = { unified: 'stop', raw: 'end_turn' };
  }
  return applyStopSequences({ blocks, finish }, request.stopSequences ?? []);
}

/**
 * Structured output: an object that validates against the schema (strings taken from the user's
 * text, as for tool arguments), or, in JSON mode, the usual answer wrapped in an object.
 */
function composeJson(request: ProviderCall['request'], conv: Conversation): string {
  const f = request.responseFormat!;
  if (f.type === 'json_object') return JSON.stringify({ answer: composeAnswer(conv) });
  return JSON.stringify(argsForSchema(f.schema, userStrings(conv.lastUserText, request.tools)));
}

/**
 * Cuts the plan before the first stop sequence found in answer text (reasoning and tool
 * arguments are not matched, as upstreams do). Later blocks are dropped; an empty cut block is
 * dropped too.
 */
export function applyStopSequences(plan: Plan, stops: string[]): Plan {
  const active = stops.filter((s) => s.length > 0);
  if (active.length === 0) return plan;
  for (let i = 0; i < plan.blocks.length; i++) {
    const block = plan.blocks[i] as PlannedBlock;
    if (block.kind !== 'text') continue;
    let at = -1;
    let matched = '';
    for (const s of active) {
      const k = block.text.indexOf(s);
      if (k >= 0 && (at < 0 || k < at)) {
        at = k;
        matched = s;
      }
    }
    if (at < 0) continue;
    const kept = plan.blocks.slice(0, i);
    if (at > 0) kept.push({ kind: 'text', text: block.text.slice(0, at) });
    return { blocks: kept, finish: { unified: 'stop-sequence', raw: 'stop_sequence', stopSequence: matched } };
  }
  return plan;
}
