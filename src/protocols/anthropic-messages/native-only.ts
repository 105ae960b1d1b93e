import { MESSAGES_EXT, type MessagesRequestBag } from '../../ir/bags.js';
import type { Message } from '../../ir/content.js';
import type { NativeOnly } from '../../ir/request.js';

/**
 * What of a Messages request only an Anthropic upstream takes, for the pipeline's warnings
 * elsewhere: server tools (only one that runs them), the body's unknown fields (`top_k`,
 * `context_management`, `container`, the rest of `output_config`, ...), server tool blocks and
 * citations in the history, and the `anthropic-beta` header. Claude Code's gateway contract asks
 * for the fields and the header to be forwarded unchanged, which only an Anthropic upstream can.
 * `metadata` is not listed: its `user_id` is the end user the gateway records.
 */
export function nativeOnlyOf(bag: MessagesRequestBag, messages: Message[], betas: string | undefined): NativeOnly[] | undefined {
  const out: NativeOnly[] = [];
  const add = (feature: string, names: string[], more: Partial<NativeOnly> = {}) => out.push({ protocol: MESSAGES_EXT, upstream: 'Anthropic', feature, names, ...more });
  if (bag.serverTools?.length) add('server tools', distinct(bag.serverTools.map((t) => String(t.type))), { serverTools: true });
  const fields = lostFields(bag.fields ?? {});
  if (fields.length) add('fields', fields);
  const history = messages.flatMap((m) => (m.role === 'assistant' ? m.content : []));
  const serverCalls = history.flatMap((p) => (p.type === 'server-tool-call' ? [p.name] : []));
  if (serverCalls.length) add('server tool calls', distinct(serverCalls), { inConversation: true });
  if (history.some((p) => p.type === 'text' && p.citations?.length)) add('citations', [], { inConversation: true });
  if (betas) add('anthropic-beta', [betas]);
  return out.length ? out : undefined;
}

/** The body's fields another upstream loses: not `metadata`, nor `output_config` when it holds only the format (which the IR carries). */
function lostFields(fields: NonNullable<MessagesRequestBag['fields']>): string[] {
  const config = fields.output_config;
  const onlyFormat = !config || Object.keys(config).every((k) => k === 'format');
  return Object.keys(fields).filter((k) => k !== 'metadata' && (k !== 'output_config' || !onlyFormat));
}

function distinct(names: string[]): string[] {
  return [...new Set(names)];
}
