import type { Published } from '../shared/published.js';
import type { AssistantPart } from '../../ir/content.js';
import { costField } from '../shared/cost-field.js';
import type { Finish, FinishReason } from '../../ir/finish.js';
import type { Response } from '../../ir/response.js';
import type { Usage } from '../../ir/usage.js';
import type { EncodeMeta } from '../types.js';
import { messageId } from '../shared/ids.js';
import { parseToolInput } from '../shared/json.js';
import { thinkingBlockValue } from '../shared/reasoning-envelope.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

const STOP: Record<FinishReason, StopReason> = {
  stop: 'end_turn',
  other: 'end_turn',
  error: 'end_turn',
  length: 'max_tokens',
  'tool-calls': 'tool_use',
  'stop-sequence': 'stop_sequence',
  refusal: 'refusal',
  pause: 'pause_turn',
};

/** `stop_reason`, `stop_sequence` and (when known) `stop_details`, as message and message_delta carry them. */
export function stopFields(f: Finish) {
  return {
    stop_reason: STOP[f.unified] ?? 'end_turn',
    stop_sequence: f.stopSequence ?? null,
    ...(f.details ? { stop_details: f.details } : {}),
  };
}

/**
 * Usage in Anthropic's split: `input_tokens` excludes cache reads and writes. `iterations` counts
 * the attempts, as the interface spec states for a fallback, and is sent only when there was one:
 * Anthropic's beta API has a `usage.iterations` of its own (an array), and the SDK's tool runner
 * fails on a number there, so an answer without a fallback leaves the field out.
 */
export function messagesUsage(u: Usage, iterations: number, cost?: bigint) {
  return {
    input_tokens: u.input.noCache,
    cache_creation_input_tokens: u.input.cacheWrite,
    cache_read_input_tokens: u.input.cacheRead,
    // The writes by lifetime and the server tools' uses, as Anthropic reports them, when the upstream did.
    ...(u.input.cacheWrite1h !== undefined
      ? { cache_creation: { ephemeral_5m_input_tokens: u.input.cacheWrite - u.input.cacheWrite1h, ephemeral_1h_input_tokens: u.input.cacheWrite1h } }
      : {}),
    output_tokens: u.output.total,
    ...(u.serverTools ? { server_tool_use: Object.fromEntries(Object.entries(u.serverTools).map(([tool, n]) => [`${tool}_requests`, n])) } : {}),
    ...(iterations > 1 ? { iterations } : {}),
    ...costField(cost),
  };
}

/** One IR assistant part as a content block; unknown fields from an Anthropic upstream (ext) come back. */
type ServerToolResultType = Extract<Published<'Message'>['content'][number], { tool_use_id: string }>['type'];

export function contentBlock(p: AssistantPart): Published<'Message'>['content'][number] {
  switch (p.type) {
    case 'text':
      return { ...p.ext?.anthropic, type: 'text', text: p.text, ...(p.citations?.length ? { citations: p.citations } : {}) };
    case 'reasoning':
      if (p.redacted !== undefined) return { type: 'redacted_thinking', data: thinkingBlockValue(p.origin, p.redacted, 'redacted') };
      return { type: 'thinking', thinking: p.text, signature: p.signature === undefined ? '' : thinkingBlockValue(p.origin, p.signature, 'signature') };
    case 'tool-call':
      return { ...p.ext?.anthropic, type: 'tool_use', id: p.id, name: p.name, input: parseToolInput(p.arguments) };
    case 'server-tool-call':
      return { ...p.ext?.anthropic, type: 'server_tool_use', id: p.id, name: p.name, input: parseToolInput(p.arguments) };
    case 'server-tool-result':
      // The IR keeps the kind the upstream named; the published union lists the kinds Anthropic documents.
      return { ...p.ext?.anthropic, type: p.kind as ServerToolResultType, tool_use_id: p.toolCallId, content: p.content };
    case 'fallback':
      return { type: 'fallback', from: p.from, to: p.to, reason: p.reason };
  }
}

/**
 * IR response -> Message body. `usage.iterations` counts the attempts (1 + fallbacks), as the
 * interface spec states; fallback hops appear in `content` as `fallback` blocks.
 */
export function encodeMessagesResponse(res: Response, meta: EncodeMeta): Published<'Message'> {
  return {
    id: messageId(meta.requestId),
    type: 'message',
    role: 'assistant',
    model: res.model,
    content: res.content.map(contentBlock),
    ...stopFields(res.finish),
    usage: messagesUsage(res.usage, Math.max(1, res.attempts.length), res.cost),
  };
}
