import { MESSAGES_EXT, RESPONSES_EXT, type Request } from '../ir/index.js';
import type { ProviderCapabilities } from '../providers/types.js';

/** The Responses protocol's bag (its hosted tools and untranslatable items wait there). */
const RESPONSES = RESPONSES_EXT;
/** The messages protocol's bag (its server tools wait there). */
const MESSAGES = MESSAGES_EXT;

/**
 * What of a request the chosen upstream will not see, as warnings for the log and the
 * `x-switchyard-warnings` header, read from the upstream's capabilities. Hosted tools (web_search,
 * namespace, mcp, ...) and hosted tool call items only reach an upstream that speaks Responses
 * and runs its server tools; elsewhere they are dropped, never a 400. Anthropic server tools (web
 * search, code execution, ...) likewise only reach a Messages-speaking upstream that runs them;
 * JSON mode, a JSON schema and a `none` tool choice only an upstream that has them.
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
  const speaksMessages = can.nativeProtocol === MESSAGES;
  const serverTools = req.ext[MESSAGES]?.serverTools;
  if (!(speaksMessages && can.serverTools) && isNonEmpty(serverTools)) {
    out.push(`server tools dropped (the upstream is not Anthropic): ${typesOf(serverTools, (t) => t.type)}`);
  }
  if (!speaksMessages) out.push(...anthropicOnly(req));
  const ext = req.ext[RESPONSES];
  if (!ext) return out;
  const refs = ext.droppedReferences;
  if (isNonEmpty(refs)) out.push(`item_reference dropped (no stored responses): ${refs.join(', ')}`);
  if (can.nativeProtocol === RESPONSES && can.serverTools) return out;
  const hosted = isNonEmpty(ext.hostedTools) ? (ext.hostedTools as Array<Record<string, unknown>>) : [];
  // A namespace tool's functions travel as IR functions (`<namespace>__<name>`); only its other tools are lost.
  const others = hosted.filter((t) => t?.type !== 'namespace');
  if (others.length) out.push(`hosted tools dropped (the upstream is not Responses-speaking): ${typesOf(others, (t) => t.type)}`);
  const inNamespaces = hosted.filter((t) => t?.type === 'namespace').flatMap((t) => (Array.isArray(t.tools) ? t.tools : []).filter((i) => i?.type !== 'function').map((i) => `${String(t.name)}.${String(i?.name ?? i?.type)}`));
  if (inNamespaces.length) out.push(`namespace tools other than functions dropped (the upstream is not Responses-speaking): ${inNamespaces.join(', ')}`);
  if (isNonEmpty(ext.otherItems)) {
    out.push(`input items dropped (the upstream is not Responses-speaking): ${typesOf(ext.otherItems, (i) => (i.item as { type?: unknown } | undefined)?.type)}`);
  }
  return out;
}

/**
 * Ext keys of a Messages request that are not client fields an Anthropic upstream would lose:
 * server tools (warned above), raw values kept for translation, and `metadata`, whose `user_id`
 * the gateway records as the end user.
 */
const NOT_CLIENT_FIELDS = new Set(['serverTools', 'reasoning_effort', 'metadata']);

/**
 * What only an Anthropic upstream reads of a Messages request: its unknown body fields (`top_k`,
 * `context_management`, `container`, the rest of `output_config` ...) and the `anthropic-beta`
 * header. Claude Code's gateway contract asks for both to be forwarded unchanged, which only an
 * Anthropic upstream can take; elsewhere each is named in a warning.
 */
function anthropicOnly(req: Request): string[] {
  const out: string[] = [];
  const ext = req.ext[MESSAGES] ?? {};
  const fields = Object.keys(ext).filter((k) => !NOT_CLIENT_FIELDS.has(k));
  const config = ext.output_config;
  // output_config.format travels in the IR; only its other members are lost.
  const lost = fields.filter((k) => k !== 'output_config' || (typeof config === 'object' && config !== null && Object.keys(config).some((c) => c !== 'format')));
  if (lost.length) out.push(`fields dropped (the upstream is not Anthropic): ${lost.join(', ')}`);
  const history = req.messages.flatMap((m) => (m.role === 'assistant' ? m.content : []));
  const serverCalls = history.filter((p) => p.type === 'server-tool-call');
  if (serverCalls.length) out.push(`server tool calls dropped from the conversation (the upstream is not Anthropic): ${[...new Set(serverCalls.map((p) => p.name))].join(', ')}`);
  if (history.some((p) => p.type === 'text' && p.citations?.length)) out.push('citations dropped from the conversation (the upstream is not Anthropic)');
  const betas = req.passHeaders['anthropic-beta'];
  if (betas) out.push(`anthropic-beta dropped (the upstream is not Anthropic): ${betas}`);
  return out;
}

/** The history holds a tool call or a tool result (an upstream then wants the tools declared). */
function holdsToolCalls(req: Request): boolean {
  return req.messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.content.some((p) => p.type === 'tool-call')));
}

function isNonEmpty(v: unknown): v is unknown[] {
  return Array.isArray(v) && v.length > 0;
}

/** The distinct kinds in a list, for a warning. */
function typesOf(list: unknown[], kind: (entry: Record<string, unknown>) => unknown): string {
  return [...new Set(list.map((e) => String(kind((e ?? {}) as Record<string, unknown>))))].join(', ');
}
