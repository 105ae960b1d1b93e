import { refusalExplanation, toolGroupOf, type AssistantPart, type Finish, type Response, type ToolGroup } from '../../ir/index.js';
import type { EncodeMeta } from '../types.js';
import { buildResponse, encryptedContentFor, itemId, statusOf } from './build-response.js';

type Json = Record<string, unknown>;
type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export const outputText = (text: string): Json => ({ type: 'output_text', text, annotations: [], logprobs: [] });

export function messageItem(id: string, status: ItemStatus, texts: string[]): Json {
  return { type: 'message', id, status, role: 'assistant', content: texts.map(outputText) };
}

export const refusalPart = (refusal: string): Json => ({ type: 'refusal', refusal });

export function refusalItem(id: string, status: ItemStatus, refusal: string): Json {
  return { type: 'message', id, status, role: 'assistant', content: [refusalPart(refusal)] };
}

export function reasoningItem(id: string, summary: string[], encrypted: Json): Json {
  return { type: 'reasoning', id, summary: summary.map((text) => ({ type: 'summary_text', text })), ...encrypted };
}

/** A function call item; a call to a namespaced function gets its `namespace` and own name back. */
export function functionCallItem(id: string, callId: string, name: string, args: string, status: ItemStatus, group?: ToolGroup): Json {
  const named = group ? { namespace: group.namespace, name: group.name } : { name };
  return { type: 'function_call', id, call_id: callId, ...named, arguments: args, status };
}

/**
 * One output item per IR part, in order; the item's position is its `output_index` (the stream
 * encoder numbers the same way, so both paths give the same ids). Fallback parts are not items:
 * the hops are reported in `switchyard.attempts`. As OpenAI does, the item the output ceiling cut
 * is `incomplete`, and a refusal's explanation is a last message with a `refusal` part.
 */
export function encodeOutput(content: AssistantPart[], meta: EncodeMeta, finish: Finish): Json[] {
  const out: Json[] = [];
  for (const part of content) {
    const index = out.length;
    switch (part.type) {
      case 'text':
        out.push(messageItem(itemId(meta, 'msg', index), 'completed', [part.text]));
        break;
      case 'reasoning':
        // Signatures and encrypted reasoning ride in encrypted_content (raw or as an envelope).
        out.push(reasoningItem(itemId(meta, 'rs', index), part.text === '' ? [] : [part.text], encryptedContentFor(part)));
        break;
      case 'tool-call':
        out.push(functionCallItem(itemId(meta, 'fc', index), part.id, part.name, part.arguments, 'completed', toolGroupOf(meta.request.tools, part.name)));
        break;
      case 'fallback':
        break;
    }
  }
  const last = out.at(-1);
  if (finish.unified === 'length' && last && last.type !== 'reasoning') out[out.length - 1] = { ...last, status: 'incomplete' };
  const refusal = refusalExplanation(finish);
  if (refusal) out.push(refusalItem(itemId(meta, 'msg', out.length), 'completed', refusal));
  return out;
}

/** IR Response into a Responses `Response` object (non-streamed). */
export function encodeResponse(res: Response, meta: EncodeMeta): Json {
  const { status, incomplete } = statusOf(res.finish);
  return buildResponse(meta, {
    status,
    model: res.model,
    output: encodeOutput(res.content, meta, res.finish),
    usage: res.usage,
    cost: res.cost,
    incomplete,
    error: null,
    switchyard: { attempts: res.attempts, ...(res.servedVariant ? { servedVariant: res.servedVariant } : {}) },
  });
}
