/**
 * Streams a local model's plan as IR events, token by token.
 *
 * - Every delta is one tokenizer piece (one token, or the few tokens of one character), so the
 *   output count is exactly the tokens emitted.
 * - The ceiling (`request.maxTokens`) covers reasoning, text and tool arguments. When the next
 *   piece would pass it, the open block is closed and the finish is `length`. A piece spanning
 *   several tokens is never split, so in that rare case output stops a token or two short.
 * - On abort the generator throws the signal's reason (a DOMException `AbortError` unless the
 *   aborter gave one) and emits nothing more; the pipeline reads an aborted signal as a client
 *   disconnect.
 */
import type { UpstreamEvent, Usage } from '../../ir/index.js';
import { countRequestTokensAsync, tokenPieces } from '../../util/tokenizer.js';
import type { ProviderCall } from '../types.js';
import { deriveId } from './make-seed.js';
import { localOptions } from './options.js';
import { Pacer } from './pace.js';
import { planOutput, type PlannedBlock } from './plan-output.js';
import { checkReasoningSignatures, signReasoning } from './sign-reasoning.js';

interface Budget {
  limit: number;
  used: number;
  reasoning: number;
  cut: boolean;
}

/** The registry key of the built-in models, also their reasoning signatures' family. */
export const LOCAL_KIND = 'local';

export async function* generate(call: ProviderCall): AsyncGenerator<UpstreamEvent> {
  // One abort check in front of every event: after an abort nothing more is yielded.
  for await (const event of produce(call)) {
    call.signal.throwIfAborted();
    yield event;
  }
}

async function* produce(call: ProviderCall): AsyncGenerator<UpstreamEvent> {
  const { request, target, signal } = call;
  signal.throwIfAborted();
  checkReasoningSignatures(request.messages);
  const inputTokens = await countRequestTokensAsync(request);
  const plan = planOutput(call);
  const usage = (): Usage => ({
    input: { noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    output: { total: budget.used, reasoning: budget.reasoning },
  });
  const budget: Budget = { limit: Math.max(0, request.maxTokens), used: 0, reasoning: 0, cut: false };
  // A client's stream is paced at the model's rate; a whole answer is generated at once unless the
  // model is set to pace those too.
  const { tokensPerSecond, paceWholeAnswers } = localOptions(target);
  const paced = (call.clientStreams ?? request.stream) || paceWholeAnswers;
  const pacer = new Pacer(paced ? tokensPerSecond : undefined, signal);

  yield { type: 'start', id: deriveId('msg_local_', call.requestId), model: target.upstreamModel, usage: usage() };
  for (const [index, block] of plan.blocks.entries()) {
    yield* streamBlock(block, `b${index}`, budget, pacer, target.upstreamModel);
    if (budget.cut) break;
  }
  const finish = budget.cut ? { unified: 'length' as const, raw: 'max_tokens' } : plan.finish;
  yield { type: 'finish', finish, usage: usage() };
}

async function* streamBlock(
  block: PlannedBlock,
  id: string,
  budget: Budget,
  pacer: Pacer,
  model: string,
): AsyncGenerator<UpstreamEvent> {
  const content = block.kind === 'tool' ? block.json : block.text;
  const pieces = tokenPieces(content);
  if (pieces.length === 0 && block.kind !== 'tool') return;
  if (pieces.length > 0 && budget.used + (pieces[0]?.tokens ?? 0) > budget.limit) {
    budget.cut = true;
    return;
  }
  if (block.kind === 'tool') yield { type: 'tool-start', id, toolCallId: block.toolCallId, name: block.name };
  else if (block.kind === 'text') yield { type: 'text-start', id };
  else yield { type: 'reasoning-start', id, origin: { provider: LOCAL_KIND, model } };

  let emitted = '';
  for (const piece of pieces) {
    if (budget.used + piece.tokens > budget.limit) {
      budget.cut = true;
      break;
    }
    const due = pacer.wait(piece.tokens);
    if (due) await due;
    budget.used += piece.tokens;
    if (block.kind === 'reasoning') budget.reasoning += piece.tokens;
    emitted += piece.text;
    if (block.kind === 'tool') yield { type: 'tool-delta', id, json: piece.text };
    else if (block.kind === 'text') yield { type: 'text-delta', id, text: piece.text };
    else yield { type: 'reasoning-delta', id, text: piece.text };
  }

  if (block.kind === 'tool') yield { type: 'tool-end', id };
  else if (block.kind === 'text') yield { type: 'text-end', id };
  else {
    // Signs what was actually emitted, so a block cut by the ceiling still round-trips.
    yield { type: 'reasoning-signature', id, signature: signReasoning(model, emitted) };
    yield { type: 'reasoning-end', id };
  }
}
