import type { NativeOnly, Request } from '../ir/index.js';
import type { ProviderCapabilities } from '../providers/types.js';

/**
 * What of a request the chosen upstream will not see, as warnings for the log and the
 * `x-switchyard-warnings` header, read from the request's IR and the upstream's capabilities:
 * JSON mode, a JSON schema and a `none` tool choice only an upstream that has them; what the
 * decoder listed as only for its protocol's native upstreams (`nativeOnly`: server tools, hosted
 * tools, unknown fields, beta headers, ...) only such an upstream, running server tools where it
 * says so; and what the decoder could give no upstream (`dropped`). Elsewhere they are dropped,
 * never a 400.
 */
export function droppedFeatures(req: Request, can: ProviderCapabilities): string[] {
  const out: string[] = [];
  if (req.responseFormat?.type === 'json_object' && !can.jsonMode) {
    out.push('JSON mode dropped (the upstream has structured output only with a schema: use json_schema)');
  }
  if (req.responseFormat?.type === 'json_schema' && can.jsonSchema === false) {
    out.push(`JSON schema response format dropped (the upstream has no structured output): ${req.responseFormat.name}`);
  }
  if (req.toolChoice?.type === 'none' && req.tools.length > 0 && can.toolChoiceNone === false && holdsToolCalls(req)) {
    out.push('tool_choice none not enforced (the upstream has no none choice; the tools in the history must be declared, so the model may call one)');
  }
  for (const d of req.dropped ?? []) out.push(warning(d.feature, d.reason, d.names));
  for (const n of req.nativeOnly ?? []) {
    if (!takes(can, n)) out.push(warning(n.feature, `the upstream is not ${n.upstream}`, n.names, n.inConversation));
  }
  return out;
}

/** The upstream speaks the feature's protocol natively (and runs its server tools, where that is needed). */
function takes(can: ProviderCapabilities, n: NativeOnly): boolean {
  return can.nativeProtocol === n.protocol && (!n.serverTools || can.serverTools);
}

/** `<feature> dropped[ from the conversation] (<reason>)[: <names>]`. */
function warning(feature: string, reason: string, names: string[], inConversation?: boolean): string {
  return `${feature} dropped${inConversation ? ' from the conversation' : ''} (${reason})${names.length ? `: ${names.join(', ')}` : ''}`;
}

/** The history holds a tool call or a tool result (an upstream then wants the tools declared). */
function holdsToolCalls(req: Request): boolean {
  return req.messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.content.some((p) => p.type === 'tool-call')));
}
