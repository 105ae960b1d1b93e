import {
  CHAT_EXT,
  type AssistantPart,
  type ImagePart,
  type Message,
  type Request,
  type ResponseFormat,
  type TextPart,
  type Tool,
  type ToolChoice,
  type ToolResultPart,
  type UserPart,
} from '../../ir/index.js';
import type { Target } from '../types.js';
import { OPENAI_KIND } from './api.js';
import { maxTokensField } from './options.js';
import { stringOption } from '../shared/model-options.js';
import type { Json } from '../shared/read-json.js';

/** The ext bag key of the OpenAI chat protocol (same-protocol passthrough). */
const EXT_KEY = CHAT_EXT;

export interface EncodedRequest {
  body: Json;
  headers: Record<string, string>;
}

/**
 * IR Request + Target -> `/chat/completions` body. Streams, with usage, when `request.stream` says
 * so (the pipeline decides, see providerCall). The ceiling goes in the provider's
 * `max_tokens_field`: `max_tokens` by default (DeepSeek, vLLM and Ollama know only that),
 * `max_completion_tokens` for OpenAI's reasoning models.
 * Unknown client fields from `request.ext['openai-chat'].fields` are merged underneath: fields the
 * IR owns (model, messages, stream, ...) always win.
 */
export function encodeRequest(request: Request, target: Target): EncodedRequest {
  const fields = request.ext[EXT_KEY]?.fields ?? {};
  const body: Json = { ...fields };
  body.model = target.upstreamModel;
  body.messages = encodeMessages(request);
  if (request.tools.length > 0) {
    body.tools = request.tools.map(encodeTool);
    if (request.toolChoice) body.tool_choice = encodeToolChoice(request.toolChoice);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  } else if (request.toolChoice?.type === 'none') {
    body.tool_choice = 'none';
  }
  body[maxTokensField(target.provider)] = request.maxTokens;
  if (request.stopSequences?.length) body.stop = request.stopSequences;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  // A raw effort the IR rounds (`minimal`, `xhigh`) rides in ext and wins for same-protocol upstreams.
  if (request.reasoning.enabled && request.reasoning.effort) body.reasoning_effort = fields.reasoning_effort ?? request.reasoning.effort;
  else delete body.reasoning_effort;
  if (request.responseFormat) body.response_format = encodeResponseFormat(request.responseFormat);
  const tier = stringOption(target, 'service_tier');
  if (tier) body.service_tier = tier;
  body.stream = request.stream;
  if (request.stream) {
    body.stream_options = { ...fields.stream_options, include_usage: true };
  } else delete body.stream_options;
  return { body, headers: {} };
}

function encodeResponseFormat(f: ResponseFormat): Json {
  if (f.type === 'json_object') return { type: 'json_object' };
  const { type, ...jsonSchema } = f;
  return { type, json_schema: jsonSchema };
}

function encodeMessages(request: Request): Json[] {
  const out: Json[] = [];
  if (request.system.length > 0) {
    out.push({ role: 'system', content: request.system.map((p) => p.text).join('\n\n') });
  }
  for (const m of request.messages) out.push(...encodeMessage(m));
  return out;
}

function encodeMessage(m: Message): Json[] {
  const ext = m.ext?.[EXT_KEY] ?? {};
  switch (m.role) {
    case 'user':
      return [{ ...ext, role: 'user', content: encodeUserContent(m.content) }];
    case 'assistant':
      return [{ ...ext, ...encodeAssistant(m.content), role: 'assistant' }];
    case 'tool':
      return encodeToolResults(m.content);
  }
}

function encodeUserContent(parts: UserPart[]): string | Json[] {
  if (parts.length === 1 && parts[0].type === 'text' && !parts[0].ext?.[EXT_KEY]) return parts[0].text;
  return parts.map((p) => (p.type === 'text' ? encodeTextPart(p) : encodeImagePart(p)));
}

function encodeTextPart(p: TextPart): Json {
  return { ...(p.ext?.[EXT_KEY] ?? {}), type: 'text', text: p.text };
}

function encodeImagePart(p: ImagePart): Json {
  const url = p.source.kind === 'base64' ? `data:${p.source.mediaType};base64,${p.source.data}` : p.source.url;
  // `detail` and the client's other image_url fields live inside image_url on the wire.
  return { type: 'image_url', image_url: { ...(p.detail !== undefined ? { detail: p.detail } : {}), ...(p.ext?.[EXT_KEY] ?? {}), url } };
}

function encodeAssistant(parts: AssistantPart[]): Json {
  const text: string[] = [];
  const toolCalls: Json[] = [];
  const reasoning: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') text.push(p.text);
    else if (p.type === 'tool-call') {
      toolCalls.push({
        id: p.id,
        type: 'function',
        // An empty argument string is not valid JSON; upstreams reject it.
        function: { name: p.name, arguments: p.arguments.trim() === '' ? '{}' : p.arguments },
      });
    } else if (p.type === 'reasoning' && isOwnReasoning(p.origin?.provider) && p.text) {
      // DeepSeek needs its reasoning echoed on tool turns. Other providers' reasoning (and every
      // signature) never crosses over.
      reasoning.push(p.text);
    }
    // 'fallback' parts are gateway records, never sent upstream.
  }
  const msg: Json = { content: text.length > 0 ? text.join('') : null };
  if (reasoning.length > 0) msg.reasoning_content = reasoning.join('');
  if (toolCalls.length > 0) msg.tool_calls = toolCalls;
  else if (msg.content === null) msg.content = '';
  return msg;
}

/** Reasoning produced by an OpenAI-compatible chat upstream (origin provider 'openai'). */
export function isOwnReasoning(provider: string | undefined): boolean {
  return provider === OPENAI_KIND;
}

/** One `tool` message per result; images cannot ride in a tool message, so they follow in a user turn. */
function encodeToolResults(results: ToolResultPart[]): Json[] {
  const out: Json[] = [];
  const images: Json[] = [];
  for (const r of results) {
    const texts = r.content.filter((c): c is TextPart => c.type === 'text').map((c) => c.text);
    let content = texts.join('\n');
    if (r.isError) content = `Error: ${content}`;
    out.push({ role: 'tool', tool_call_id: r.toolCallId, content });
    for (const c of r.content) if (c.type === 'image') images.push(encodeImagePart(c));
  }
  if (images.length > 0) {
    out.push({ role: 'user', content: images });
  }
  return out;
}

function encodeTool(t: Tool): Json {
  const fn: Json = { name: t.name, ...(t.ext?.[EXT_KEY] ?? {}) };
  if (t.description !== undefined) fn.description = t.description;
  fn.parameters = t.inputSchema;
  return { type: 'function', function: fn };
}

function encodeToolChoice(c: ToolChoice): unknown {
  if (c.type === 'tool') return { type: 'function', function: { name: c.name } };
  if (c.type !== 'none' && c.allowed) {
    return { type: 'allowed_tools', allowed_tools: { mode: c.type, tools: c.allowed.map((name) => ({ type: 'function', function: { name } })) } };
  }
  return c.type;
}

