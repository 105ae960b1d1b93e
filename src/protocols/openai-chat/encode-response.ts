import type { Published } from '../shared/published.js';
import { refusalExplanation, type FinishReason } from '../../ir/finish.js';
import type { ReasoningPart } from '../../ir/content.js';
import type { Response } from '../../ir/response.js';
import { inputTotal, type Usage } from '../../ir/usage.js';
import type { EncodeMeta } from '../types.js';
import { chatCompletionId } from '../shared/ids.js';
import { costField } from '../shared/cost-field.js';
import { thinkingBlockValue } from '../shared/reasoning-envelope.js';

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

const FINISH: Record<FinishReason, ChatFinishReason> = {
  stop: 'stop',
  'stop-sequence': 'stop',
  pause: 'stop',
  other: 'stop',
  error: 'stop',
  length: 'length',
  'tool-calls': 'tool_calls',
  refusal: 'content_filter',
};

export const chatFinishReason = (r: FinishReason): ChatFinishReason => FINISH[r] ?? 'stop';

/** Chat usage, with the request's cost in USD (`cost`, OpenRouter's field) once priced. */
export function chatUsage(u: Usage, cost?: bigint) {
  const prompt = inputTotal(u);
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output.total,
    total_tokens: prompt + u.output.total,
    prompt_tokens_details: { cached_tokens: u.input.cacheRead },
    completion_tokens_details: { reasoning_tokens: u.output.reasoning },
    ...costField(cost),
  };
}

type ChatMessage = Published<'ChatCompletion'>['choices'][number]['message'];
type ThinkingBlock = NonNullable<ChatMessage['thinking_blocks']>[number];
type ToolCall = NonNullable<ChatMessage['tool_calls']>[number];

/** A signed or redacted reasoning part as a LiteLLM-style `thinking_blocks` entry the client can send back. */
export function thinkingBlock(p: ReasoningPart): ThinkingBlock | undefined {
  if (p.redacted !== undefined) return { type: 'redacted_thinking', data: thinkingBlockValue(p.origin, p.redacted, 'redacted') };
  if (p.signature !== undefined) return { type: 'thinking', thinking: p.text, signature: thinkingBlockValue(p.origin, p.signature, 'signature') };
  return undefined;
}

/**
 * IR response -> chat.completion body. Fallback parts are not content on chat: the hops are in
 * `switchyard.attempts`. On a refusal finish, `message.refusal` carries the provider's
 * explanation when it gave one (Anthropic `stop_details.explanation`).
 */
export function encodeChatResponse(res: Response, meta: EncodeMeta): Published<'ChatCompletion'> {
  let text: string | null = null;
  let reasoning: string | null = null;
  const thinkingBlocks: ThinkingBlock[] = [];
  const toolCalls: ToolCall[] = [];
  for (const p of res.content) {
    if (p.type === 'text') text = (text ?? '') + p.text;
    else if (p.type === 'reasoning') {
      if (p.redacted === undefined) reasoning = (reasoning ?? '') + p.text;
      const block = thinkingBlock(p);
      if (block) thinkingBlocks.push(block);
    } else if (p.type === 'tool-call') {
      toolCalls.push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments } });
    }
  }
  const refusal = refusalExplanation(res.finish) ?? null;
  const message: ChatMessage = {
    role: 'assistant',
    content: text,
    refusal,
    ...(reasoning !== null ? { reasoning_content: reasoning } : {}),
    ...(thinkingBlocks.length ? { thinking_blocks: thinkingBlocks } : {}),
    ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
  };
  return {
    id: chatCompletionId(meta.requestId),
    object: 'chat.completion',
    created: meta.created,
    model: res.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: chatFinishReason(res.finish.unified) }],
    usage: chatUsage(res.usage, res.cost),
    switchyard: { attempts: res.attempts, served_variant: res.servedVariant ?? 'standard' },
  };
}
