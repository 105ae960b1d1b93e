import { GatewayError, invalid } from '../../ir/errors.js';
import { MESSAGES_EXT, type MessagesRequestBag, type RequestExt } from '../../ir/bags.js';
import type { AssistantPart, Citation, ImagePart, Message, TextPart, ToolResultPart, UserPart } from '../../ir/content.js';
import type { Reasoning, Request, ResponseFormat, Tool, ToolChoice } from '../../ir/request.js';
import type { HeaderBag } from '../types.js';
import { decodeGatewayOptions, effortOfLevel, GATEWAY_OPTION_KEYS } from '../shared/decode-options.js';
import { attributionOf } from '../shared/attribution.js';
import { checkTools, clientIndex } from '../shared/check-tools.js';
import { decodeMessagesOutputFormat } from '../shared/decode-response-format.js';
import { extOf, isRecord, opt, restOf, type JsonObject } from '../shared/json.js';
import { thinkingBlockFacts } from '../shared/reasoning-envelope.js';
import { billingHints } from './billing-hints.js';
import { nativeOnlyOf } from './native-only.js';

const P = MESSAGES_EXT;
/** Messages' output ceiling when the client omits `max_tokens` (interface spec, Limits). */
export const MESSAGES_DEFAULT_MAX_TOKENS = 4096;

const MAPPED = new Set([
  'model', 'messages', 'system', 'max_tokens', 'tools', 'tool_choice', 'stream', 'stop_sequences',
  'temperature', 'top_p', 'output_format', ...GATEWAY_OPTION_KEYS,
]);

/**
 * Messages body -> IR request. Decisions:
 * - a `role:"system"` turn inside `messages` is moved to `system`, in order.
 * - `tool_result` blocks become one IR `tool` message placed before the rest of their user turn.
 * - a `document` block with a plain-text source becomes a text part (the original block kept in
 *   `ext.anthropic.document` so an Anthropic upstream can restore it); any other block type we
 *   cannot translate (PDF/url documents, search results, server tool blocks ...) is a 400
 *   naming the type, rather than a silent drop.
 * - server tools (a `type` other than `custom`) travel in `ext.anthropic.serverTools`, the body's
 *   other unknown fields in `ext.anthropic.fields`; what of them only an Anthropic upstream takes is
 *   listed in `nativeOnly`, with the `anthropic-beta` header and server tool blocks in the history.
 * - `vendor-version` is accepted as an alias of `anthropic-version` (the interface spec's name).
 */
export function decodeMessagesRequest(body: JsonObject, headers: HeaderBag): Request {
  if (!Array.isArray(body.messages)) throw invalid('messages must be an array', 'messages');
  rejectThread(body.thread);
  const opts = decodeGatewayOptions(body);
  applyOutputEffort(opts.reasoning, body);
  // A raw effort the IR rounds (`opts.extras`) has no Messages field: no upstream gets it.
  const fields = restOf(body, MAPPED);
  const system = systemParts(body.system, 'system');
  const messages = decodeMessages(body.messages, system);
  const { tools, serverTools } = decodeTools(body.tools);
  const bag: MessagesRequestBag = { ...opt('fields', fields), ...(serverTools.length ? { serverTools } : {}) };
  const pass = passHeaders(headers);
  const choice = decodeToolChoice(body.tool_choice);
  // Server tools are left out of the list, so the index named is the custom tool's own.
  const serverNames = serverTools.flatMap((t) => (typeof t.name === 'string' ? [t.name] : []));
  checkTools(tools, choice?.choice, (i) => `tools.${clientIndex(body.tools, i, (t) => t.type == null || t.type === 'custom')}.name`, 'tool_choice.name', serverNames);
  const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
  return {
    model: String(body.model ?? ''),
    system,
    messages,
    tools,
    ...opt('toolChoice', choice?.choice),
    ...opt('parallelToolCalls', choice?.parallel),
    maxTokens: maxTokens ?? MESSAGES_DEFAULT_MAX_TOKENS,
    maxTokensDefaulted: maxTokens === undefined,
    stream: body.stream === true,
    ...opt('stopSequences', Array.isArray(body.stop_sequences) ? body.stop_sequences.map(String) : undefined),
    ...opt('temperature', typeof body.temperature === 'number' ? body.temperature : undefined),
    ...opt('topP', typeof body.top_p === 'number' ? body.top_p : undefined),
    reasoning: opts.reasoning,
    ...opt('responseFormat', decodeOutputFormat(body)),
    fast: opts.fast,
    fallbacks: opts.fallbacks,
    ext: Object.keys(bag).length ? ({ [P]: bag } satisfies RequestExt) : {},
    passHeaders: pass,
    ...opt('nativeOnly', nativeOnlyOf(bag, messages, pass['anthropic-beta'])),
    ...opt('attribution', attributionOf(headers, [isRecord(body.metadata) ? body.metadata.user_id : undefined], [])),
    ...opt('billing', billingHints(body)),
  };
}

/**
 * Message threads (`thread`, a beta: the server keeps the conversation and `continue` sends only
 * the new turns) are refused rather than ignored: ignored, a `continue` would be answered without
 * its history. Their server-side rules (which fields must match, one continuation per reply) are
 * not published exactly enough to reproduce. The refusal carries Anthropic's own error code for
 * it, on which the SDK's tool runner stops threading and resends the full conversation.
 */
function rejectThread(thread: unknown): void {
  if (thread === undefined || thread === null) return;
  throw new GatewayError('invalid_request', 'thread: message threads are not supported by this gateway; send the full conversation in messages without thread', {
    param: 'thread',
    code: 'thread_unsupported_request',
    details: { details: { error_code: 'thread_unsupported_request', unsupported: ['thread'] } },
  });
}

/**
 * `output_config.format`, else the deprecated `output_format`. The rest of `output_config`
 * (effort, ...) stays in ext for an Anthropic upstream; the format itself travels in the IR.
 */
function decodeOutputFormat(body: JsonObject): ResponseFormat | undefined {
  const config = body.output_config;
  if (config !== undefined && config !== null && !isRecord(config)) throw invalid('output_config must be an object', 'output_config');
  return decodeMessagesOutputFormat(config?.format, 'output_config.format') ?? decodeMessagesOutputFormat(body.output_format, 'output_format');
}

/**
 * Anthropic's `output_config.effort` (what Claude Code sends with adaptive thinking) is the
 * reasoning effort by level when the gateway's `reasoning_effort` is not given: `high` stays high
 * for another upstream (`max` and `xhigh` are high, as `reasoning_effort`'s). The field itself stays
 * in `output_config` for an Anthropic upstream; an unknown level is left to it.
 */
function applyOutputEffort(reasoning: Reasoning, body: JsonObject): void {
  if (body.reasoning_effort != null || body.thinking_effort != null || !isRecord(body.output_config)) return;
  const effort = effortOfLevel(body.output_config.effort);
  if (effort !== undefined && effort !== 'none') reasoning.effort = effort;
}

function passHeaders(h: HeaderBag): Record<string, string> {
  const out: Record<string, string> = {};
  const version = h['anthropic-version'] ?? h['vendor-version'];
  if (version) out['anthropic-version'] = version;
  if (h['anthropic-beta']) out['anthropic-beta'] = h['anthropic-beta'];
  return out;
}

function systemParts(sys: unknown, at: string): TextPart[] {
  if (sys == null) return [];
  if (typeof sys === 'string') return [{ type: 'text', text: sys }];
  if (!Array.isArray(sys)) throw invalid('system must be a string or an array of text blocks', at);
  return sys.map((b, j) => {
    if (!isRecord(b) || b.type !== 'text' || typeof b.text !== 'string') throw invalid('system blocks must be text blocks', `${at}.${j}`);
    return textPart(b);
  });
}

function decodeMessages(raw: unknown[], system: TextPart[]): Message[] {
  const messages: Message[] = [];
  raw.forEach((m, i) => {
    const at = `messages.${i}`;
    if (!isRecord(m)) throw invalid('each message must be an object', at);
    const ext = extOf(P, restOf(m, ['role', 'content']));
    if (m.role === 'system') {
      system.push(...systemParts(m.content, `${at}.content`).map((t) => ({ ...t, hoisted: true })));
    } else if (m.role === 'user') {
      const { results, rest } = userBlocks(m.content, `${at}.content`);
      if (results.length) messages.push({ role: 'tool', content: results });
      if (rest.length || !results.length) messages.push({ role: 'user', content: rest, ...ext });
    } else if (m.role === 'assistant') {
      messages.push({ role: 'assistant', content: assistantBlocks(m.content, `${at}.content`), ...ext });
    } else {
      throw invalid(`unsupported message role ${JSON.stringify(m.role)}`, `${at}.role`);
    }
  });
  return messages;
}

const blocksOf = (content: unknown, at: string): JsonObject[] => {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid('content must be a string or an array of blocks', at);
  return content.map((b, j) => {
    if (!isRecord(b) || typeof b.type !== 'string') throw invalid('each content block needs a type', `${at}.${j}`);
    return b;
  });
};

const unsupported = (type: unknown, at: string) =>
  invalid(`content block type ${JSON.stringify(type)} is not supported here`, `${at}.type`);

function userBlocks(content: unknown, at: string): { results: ToolResultPart[]; rest: UserPart[] } {
  const results: ToolResultPart[] = [];
  const rest: UserPart[] = [];
  blocksOf(content, at).forEach((b, j) => {
    const bAt = `${at}.${j}`;
    if (b.type === 'tool_result') results.push(toolResult(b, bAt));
    else if (b.type === 'document') rest.push(documentText(b, bAt));
    else rest.push(mediaPart(b, bAt));
  });
  return { results, rest };
}

function mediaPart(b: JsonObject, at: string): TextPart | ImagePart {
  if (b.type === 'text' && typeof b.text === 'string') return textPart(b);
  if (b.type === 'image') return imagePart(b, at);
  throw unsupported(b.type, at);
}

function textPart(b: JsonObject): TextPart {
  const citations = Array.isArray(b.citations) ? b.citations.filter((c): c is Citation => isRecord(c) && typeof c.type === 'string') : [];
  const rest = restOf(b, citations.length ? ['type', 'text', 'citations'] : ['type', 'text']);
  return { type: 'text', text: String(b.text), ...(citations.length ? { citations } : {}), ...extOf(P, rest) };
}

function imagePart(b: JsonObject, at: string): ImagePart {
  const src = b.source;
  const ext = extOf(P, restOf(b, ['type', 'source']));
  if (isRecord(src) && src.type === 'base64' && typeof src.media_type === 'string' && typeof src.data === 'string') {
    return { type: 'image', source: { kind: 'base64', mediaType: src.media_type, data: src.data }, ...ext };
  }
  if (isRecord(src) && src.type === 'url' && typeof src.url === 'string') {
    return { type: 'image', source: { kind: 'url', url: src.url }, ...ext };
  }
  throw invalid('image source must be {type:"base64",media_type,data} or {type:"url",url}', `${at}.source`);
}

function documentText(b: JsonObject, at: string): TextPart {
  const src = b.source;
  if (isRecord(src) && src.type === 'text' && typeof src.data === 'string') {
    return { type: 'text', text: src.data, ext: { [P]: { document: b } } };
  }
  throw invalid('only documents with a plain-text source are supported', `${at}.source`);
}

function toolResult(b: JsonObject, at: string): ToolResultPart {
  if (typeof b.tool_use_id !== 'string') throw invalid('tool_result needs tool_use_id', `${at}.tool_use_id`);
  const content = b.content == null ? [] : blocksOf(b.content, `${at}.content`).map((c, k) => mediaPart(c, `${at}.content.${k}`));
  return {
    type: 'tool-result',
    toolCallId: b.tool_use_id,
    content,
    ...(b.is_error === true ? { isError: true } : {}),
    ...extOf(P, restOf(b, ['type', 'tool_use_id', 'content', 'is_error'])),
  };
}

function assistantBlocks(content: unknown, at: string): AssistantPart[] {
  return blocksOf(content, at).map((b, j): AssistantPart => {
    const bAt = `${at}.${j}`;
    switch (b.type) {
      case 'text':
        return textPart(b);
      case 'tool_use': {
        if (typeof b.id !== 'string' || typeof b.name !== 'string') throw invalid('tool_use needs id and name', bAt);
        const input = b.input === undefined ? {} : b.input;
        const ext = extOf(P, restOf(b, ['type', 'id', 'name', 'input']));
        return { type: 'tool-call', id: b.id, name: b.name, arguments: JSON.stringify(input), ...ext };
      }
      case 'thinking': {
        if (typeof b.thinking !== 'string') throw invalid('thinking blocks need thinking text', `${bAt}.thinking`);
        // Only a signature binds reasoning to its provider; an unsigned block is plain reasoning text.
        const signed = typeof b.signature === 'string' && b.signature !== '';
        if (!signed) return { type: 'reasoning', text: b.thinking };
        return { type: 'reasoning', ...thinkingBlockFacts(b.thinking, b.signature as string, 'signature', `${bAt}.signature`) };
      }
      case 'redacted_thinking':
        if (typeof b.data !== 'string') throw invalid('redacted_thinking blocks need data', `${bAt}.data`);
        return { type: 'reasoning', ...thinkingBlockFacts('', b.data, 'redacted', `${bAt}.data`) };
      case 'server_tool_use': {
        // A tool the upstream ran (web search, ...): it goes back to an Anthropic upstream as it was.
        if (typeof b.id !== 'string' || typeof b.name !== 'string') throw invalid('server_tool_use needs id and name', bAt);
        const input = b.input === undefined ? {} : b.input;
        return { type: 'server-tool-call', id: b.id, name: b.name, arguments: JSON.stringify(input), ...extOf(P, restOf(b, ['type', 'id', 'name', 'input'])) };
      }
      default:
        if (isServerToolResult(b.type)) {
          if (typeof b.tool_use_id !== 'string') throw invalid(`${b.type} needs tool_use_id`, `${bAt}.tool_use_id`);
          return { type: 'server-tool-result', toolCallId: b.tool_use_id, kind: b.type, content: b.content, ...extOf(P, restOf(b, ['type', 'tool_use_id', 'content'])) };
        }
        throw unsupported(b.type, bAt);
    }
  });
}

/** The server tools' result blocks an assistant turn may give back (the document lists the same). */
const SERVER_TOOL_RESULTS = new Set([
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
]);

function isServerToolResult(type: unknown): type is string {
  return typeof type === 'string' && SERVER_TOOL_RESULTS.has(type);
}

function decodeTools(raw: unknown): { tools: Tool[]; serverTools: JsonObject[] } {
  const tools: Tool[] = [];
  const serverTools: JsonObject[] = [];
  if (raw == null) return { tools, serverTools };
  if (!Array.isArray(raw)) throw invalid('tools must be an array', 'tools');
  raw.forEach((t, i) => {
    if (!isRecord(t)) throw invalid('each tool must be an object', `tools.${i}`);
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      serverTools.push(t);
      return;
    }
    if (typeof t.name !== 'string') throw invalid('tools need a name', `tools.${i}.name`);
    tools.push({
      name: t.name,
      ...opt('description', typeof t.description === 'string' ? t.description : undefined),
      inputSchema: isRecord(t.input_schema) ? t.input_schema : { type: 'object', properties: {} },
      ...extOf(P, restOf(t, ['type', 'name', 'description', 'input_schema'])),
    });
  });
  return { tools, serverTools };
}

const CHOICES: Record<string, ToolChoice['type']> = { auto: 'auto', any: 'required', none: 'none', tool: 'tool' };

function decodeToolChoice(tc: unknown): { choice: ToolChoice; parallel?: boolean } | undefined {
  if (tc == null) return undefined;
  const kind = isRecord(tc) && typeof tc.type === 'string' ? CHOICES[tc.type] : undefined;
  if (!isRecord(tc) || !kind) throw invalid('tool_choice.type must be auto, any, none or tool', 'tool_choice.type');
  let choice: ToolChoice;
  if (kind === 'tool') {
    if (typeof tc.name !== 'string') throw invalid('tool_choice {type:"tool"} needs a name', 'tool_choice.name');
    choice = { type: 'tool', name: tc.name };
  } else {
    choice = { type: kind };
  }
  return { choice, ...(tc.disable_parallel_tool_use === true ? { parallel: false } : {}) };
}
