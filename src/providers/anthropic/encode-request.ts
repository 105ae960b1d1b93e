import { toolArgumentsObject } from '../shared/tool-arguments.js';
import { allowedTools, MESSAGES_EXT, THINKING_FAMILY, type AssistantPart, type ImagePart, type Message, type Request, type TextPart, type Tool, type ToolChoice, type UserPart } from '../../ir/index.js';
import type { Target } from '../types.js';
import { DEFAULT_ANTHROPIC_VERSION, FAST_MODE_BETA } from './api.js';
import { type Json, isObject } from '../shared/read-json.js';
import { stringOption } from '../shared/model-options.js';

/** The ext bag key of the Anthropic protocol (same-protocol passthrough). */
const EXT_KEY = MESSAGES_EXT;

export interface EncodedRequest {
  body: Json;
  headers: Record<string, string>;
}

/**
 * IR Request + Target -> `/v1/messages` body and headers. Unknown client fields from
 * `request.ext.anthropic.fields` (metadata, top_k, container, ...) are merged underneath the fields
 * the IR owns; server tools (`ext.anthropic.serverTools`) are appended to the function tools.
 */
export function encodeRequest(request: Request, target: Target): EncodedRequest {
  const { fields = {}, serverTools = [] } = request.ext[EXT_KEY] ?? {};
  const body: Json = { ...fields };
  body.model = target.upstreamModel;
  body.max_tokens = request.maxTokens;
  const system = encodeSystem(request.system);
  if (system !== undefined) body.system = system;
  body.messages = encodeMessages(request.messages);
  // Anthropic has no allowed_tools: the tools a tool_choice does not allow are left out.
  const allowed = allowedTools(request.toolChoice);
  const functionTools = allowed ? request.tools.filter((t) => allowed.includes(t.name)) : request.tools;
  const tools = [...functionTools.map(encodeTool), ...serverTools];
  if (tools.length > 0) {
    body.tools = tools;
    const choice = encodeToolChoice(request.toolChoice, request.parallelToolCalls);
    if (choice) body.tool_choice = choice;
  } else if (request.toolChoice?.type === 'none') {
    body.tool_choice = { type: 'none' };
  }
  const thinking = encodeThinking(request);
  if (thinking) body.thinking = thinking;
  // Anthropic rejects temperature with thinking on; top_p is allowed (0.95..1).
  if (request.temperature !== undefined && !thinking) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stopSequences?.length) body.stop_sequences = request.stopSequences;
  const betas = splitList(request.passHeaders['anthropic-beta']);
  const speed = stringOption(target, 'speed');
  if (speed) {
    body.speed = speed;
    if (!betas.includes(FAST_MODE_BETA)) betas.push(FAST_MODE_BETA);
  }
  // JSON mode without a schema has no Anthropic form; the pipeline warns (droppedFeatures).
  if (request.responseFormat?.type === 'json_schema') {
    const config = isObject(fields.output_config) ? fields.output_config : {};
    body.output_config = { ...config, format: { type: 'json_schema', schema: request.responseFormat.schema } };
  }
  body.stream = request.stream;
  const headers: Record<string, string> = {
    'anthropic-version': request.passHeaders['anthropic-version'] || DEFAULT_ANTHROPIC_VERSION,
  };
  if (betas.length > 0) headers['anthropic-beta'] = betas.join(',');
  return { body, headers };
}

function encodeSystem(parts: TextPart[]): string | Json[] | undefined {
  if (parts.length === 0) return undefined;
  if (parts.length === 1 && !parts[0].ext?.[EXT_KEY]) return parts[0].text;
  return parts.map(encodeText);
}

function encodeText(p: TextPart): Json {
  const ext = p.ext?.[EXT_KEY] ?? {};
  // A plain-text document block the messages decoder flattened: restore the original block.
  if (isObject(ext.document)) return ext.document;
  return { ...ext, type: 'text', text: p.text, ...(p.citations?.length ? { citations: p.citations } : {}) };
}

function encodeImage(p: ImagePart): Json {
  const source =
    p.source.kind === 'base64'
      ? { type: 'base64', media_type: p.source.mediaType, data: p.source.data }
      : { type: 'url', url: p.source.url };
  return { ...(p.ext?.[EXT_KEY] ?? {}), type: 'image', source };
}

function encodeUserPart(p: UserPart): Json {
  return p.type === 'text' ? encodeText(p) : encodeImage(p);
}

/** IR messages -> alternating turns: tool results ride in user turns, adjacent same-role turns merge. */
function encodeMessages(messages: Message[]): Json[] {
  const turns: Array<{ role: 'user' | 'assistant'; content: Json[]; ext: Json }> = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const content = encodeContent(m);
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...content);
    else turns.push({ role, content, ext: m.ext?.[EXT_KEY] ?? {} });
  }
  return turns
    .filter((t) => t.content.length > 0)
    .map((t) => ({ ...t.ext, role: t.role, content: t.role === 'user' ? toolResultsFirst(t.content) : t.content }));
}

/** The API wants a user turn's tool_result blocks before anything else in it. */
function toolResultsFirst(blocks: Json[]): Json[] {
  return [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
}

function encodeContent(m: Message): Json[] {
  switch (m.role) {
    case 'user':
      return m.content.filter((p) => p.type !== 'text' || p.text !== '').map(encodeUserPart);
    case 'tool':
      return m.content.map((r) => {
        const block: Json = { ...(r.ext?.[EXT_KEY] ?? {}), type: 'tool_result', tool_use_id: r.toolCallId };
        block.content = r.content.map(encodeUserPart);
        if (r.isError) block.is_error = true;
        return block;
      });
    case 'assistant':
      return m.content.flatMap(encodeAssistantPart);
  }
}

function encodeAssistantPart(p: AssistantPart): Json[] {
  switch (p.type) {
    case 'text':
      return p.text === '' ? [] : [encodeText(p)];
    case 'tool-call':
      return [{ ...(p.ext?.[EXT_KEY] ?? {}), type: 'tool_use', id: p.id, name: p.name, input: toolArgumentsObject(p.arguments) }];
    case 'server-tool-call':
      return [{ ...(p.ext?.[EXT_KEY] ?? {}), type: 'server_tool_use', id: p.id, name: p.name, input: toolArgumentsObject(p.arguments) }];
    case 'server-tool-result':
      return [{ ...(p.ext?.[EXT_KEY] ?? {}), type: p.kind, tool_use_id: p.toolCallId, content: p.content }];
    case 'reasoning':
      // Signed reasoning goes back byte for byte, and only to Anthropic. Unsigned or foreign
      // reasoning is dropped: the API would reject it and a signature is never invented.
      if (p.origin?.provider !== THINKING_FAMILY) return [];
      if (p.redacted !== undefined) return [{ type: 'redacted_thinking', data: p.redacted }];
      if (p.signature === undefined) return [];
      return [{ type: 'thinking', thinking: p.text, signature: p.signature }];
    case 'fallback':
      return [];
  }
}


function encodeTool(t: Tool): Json {
  const tool: Json = { name: t.name };
  if (t.description !== undefined) tool.description = t.description;
  tool.input_schema = t.inputSchema;
  return { ...tool, ...(t.ext?.[EXT_KEY] ?? {}) };
}

function encodeToolChoice(c: ToolChoice | undefined, parallel: boolean | undefined): Json | undefined {
  const choice: Json | undefined =
    c === undefined
      ? undefined
      : c.type === 'required'
        ? { type: 'any' }
        : c.type === 'tool'
          ? { type: 'tool', name: c.name }
          : { type: c.type };
  if (parallel !== false || choice?.type === 'none') return choice;
  return { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
}

/**
 * The IR's reasoning as Anthropic's `thinking`: `between_tools`, `adaptive` (also when no budget is
 * known) or `enabled` with its budget; the client's `display` and other thinking fields go with it.
 * Bedrock's Converse sends the same object in `additionalModelRequestFields`.
 */
export function encodeThinking(request: Request): Json | undefined {
  const r = request.reasoning;
  if (!r.enabled) return undefined;
  const kept: Json = { ...(r.extra ?? {}), ...(r.display !== undefined ? { display: r.display } : {}) };
  if (r.betweenTools) return { ...kept, type: 'between_tools' };
  if (r.adaptive || r.budgetTokens === undefined) return { ...kept, type: 'adaptive' };
  return { ...kept, type: 'enabled', budget_tokens: r.budgetTokens };
}

function splitList(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
