import { GatewayError, type UpstreamEvent } from '../../ir/index.js';
import { isObject, str, type Json } from '../shared/read-json.js';
import { converseOrigin, decodeConverseUsage, decodeStopReason, redactedData } from './decode-converse.js';

/** A whole Converse answer (`output.message`, `stopReason`, `usage`) -> the IR events its stream would have produced. */
export function decodeConverseResponse(body: unknown, model: string): UpstreamEvent[] {
  const message = isObject(body) && isObject(body.output) && isObject(body.output.message) ? body.output.message : undefined;
  if (!isObject(body) || !message) throw new GatewayError('bad_gateway', 'upstream sent an unusable Converse body');
  const usage = decodeConverseUsage(body.usage, body.serviceTier);
  const out: UpstreamEvent[] = [{ type: 'start', id: '', model, usage: { input: usage.input, output: { total: 0, reasoning: 0 } } }];
  const content = Array.isArray(message.content) ? message.content : [];
  content.forEach((block, i) => {
    if (isObject(block)) out.push(...decodeBlock(block, String(i), model));
  });
  out.push({ type: 'finish', finish: decodeStopReason(str(body.stopReason)), usage });
  return out;
}

function decodeBlock(b: Json, id: string, model: string): UpstreamEvent[] {
  if (typeof b.text === 'string') {
    return [{ type: 'text-start', id }, ...(b.text ? [{ type: 'text-delta' as const, id, text: b.text }] : []), { type: 'text-end', id }];
  }
  if (isObject(b.toolUse)) {
    const t = b.toolUse;
    return [
      { type: 'tool-start', id, toolCallId: str(t.toolUseId), name: str(t.name) },
      { type: 'tool-delta', id, json: JSON.stringify(isObject(t.input) ? t.input : {}) },
      { type: 'tool-end', id },
    ];
  }
  if (isObject(b.reasoningContent)) {
    const r = b.reasoningContent;
    const origin = converseOrigin(model);
    if (r.redactedContent !== undefined) return [{ type: 'reasoning-start', id, redacted: redactedData(r.redactedContent), origin }, { type: 'reasoning-end', id }];
    const text = isObject(r.reasoningText) ? r.reasoningText : {};
    return [
      { type: 'reasoning-start', id, origin },
      ...(str(text.text) ? [{ type: 'reasoning-delta' as const, id, text: str(text.text) }] : []),
      ...(str(text.signature) ? [{ type: 'reasoning-signature' as const, id, signature: str(text.signature) }] : []),
      { type: 'reasoning-end', id },
    ];
  }
  // Images, documents, citations and guard content have no IR stream home yet.
  return [];
}
