import { invalid } from '../../ir/errors.js';
import { CHAT_EXT, type ChatBodyFields, type RequestExt } from '../../ir/bags.js';
import type { AssistantPart, ImagePart, Message, TextPart, ToolResultPart, UserPart } from '../../ir/content.js';
import type { Request, Tool, ToolChoice } from '../../ir/request.js';
import type { HeaderBag } from '../types.js';
import { decodeGatewayOptions, GATEWAY_OPTION_KEYS } from '../shared/decode-options.js';
import { attributionOf } from '../shared/attribution.js';
import { checkTools } from '../shared/check-tools.js';
import { decodeChatResponseFormat } from '../shared/decode-response-format.js';
import { extOf, isRecord, opt, restOf, type JsonObject } from '../shared/json.js';
import { ENVELOPE_PREFIX, thinkingBlockFacts } from '../shared/reasoning-envelope.js';

const P = CHAT_EXT;
/** Chat's output ceiling when the client sends none (interface spec, Limits). */
export const CHAT_DEFAULT_MAX_TOKENS = 16384;

const MAPPED = new Set([
  'model', 'messages', 'max_completion_tokens', 'max_tokens', 'stop', 'tools', 'tool_choice',
  'parallel_tool_calls', 'stream', 'stream_options', 'temperature', 'top_p', 'response_format', ...GATEWAY_OPTION_KEYS,
]);

/**
 * Chat completions body -> IR request. Decisions:
 * - system/developer turns anywhere in `messages` go to `system`, in order (the IR has one
 *   system prompt); a developer turn is marked in the part's ext so an OpenAI upstream can restore the role.
 * - `n` > 1 is a 400: the gateway produces exactly one choice.
 * - every unmapped field lands in `ext['openai-chat'].fields` for a same-protocol upstream.
 */
export function decodeChatRequest(body: JsonObject, headers: HeaderBag): Request {
  if (typeof body.n === 'number' && body.n > 1) throw invalid('n > 1 is not supported: the gateway returns one choice', 'n');
  if (!Array.isArray(body.messages)) throw invalid('messages must be an array', 'messages');
  const opts = decodeGatewayOptions(body);
  const streamOptions = isRecord(body.stream_options) ? body.stream_options : undefined;
  const fields: ChatBodyFields = { ...restOf(body, MAPPED), ...opts.extras, ...opt('stream_options', streamOptions && restOf(streamOptions, ['include_usage'])) };

  const { system, messages } = decodeMessages(body.messages);
  const tools = decodeTools(body.tools);
  const toolChoice = decodeToolChoice(body.tool_choice);
  checkTools(tools, toolChoice, (i) => `tools.${i}.function.name`, 'tool_choice.function.name');
  const explicitMax = num(body.max_completion_tokens) ?? num(body.max_tokens);
  const stop = body.stop;
  return {
    model: String(body.model ?? ''),
    system,
    messages,
    tools,
    ...opt('toolChoice', toolChoice),
    ...opt('parallelToolCalls', typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : undefined),
    maxTokens: explicitMax ?? CHAT_DEFAULT_MAX_TOKENS,
    maxTokensDefaulted: explicitMax === undefined,
    ...opt('maxTokensParam', num(body.max_completion_tokens) !== undefined ? 'max_completion_tokens' : undefined),
    stream: body.stream === true,
    ...opt('includeUsage', typeof streamOptions?.include_usage === 'boolean' ? streamOptions.include_usage : undefined),
    ...opt('stopSequences', typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop.map(String) : undefined),
    ...opt('temperature', num(body.temperature)),
    ...opt('topP', num(body.top_p)),
    reasoning: opts.reasoning,
    ...opt('responseFormat', decodeChatResponseFormat(body.response_format)),
    fast: opts.fast,
    fallbacks: opts.fallbacks,
    ext: Object.keys(fields).length ? ({ [P]: { fields } } satisfies RequestExt) : {},
    passHeaders: {},
    // OpenAI's `safety_identifier` replaces `user`; `prompt_cache_key` groups one conversation.
    ...opt('attribution', attributionOf(headers, [body.safety_identifier, body.user], [body.prompt_cache_key])),
  };
}

function decodeMessages(raw: unknown[]): { system: TextPart[]; messages: Message[] } {
  const system: TextPart[] = [];
  const messages: Message[] = [];
  raw.forEach((m, i) => {
    if (!isRecord(m)) throw invalid('each message must be an object', `messages.${i}`);
    const at = `messages.${i}`;
    switch (m.role) {
      case 'system':
      case 'developer': {
        for (const t of textParts(m.content, `${at}.content`)) {
          system.push({ ...t, hoisted: true, ...(m.role === 'developer' ? { ext: { [P]: { ...t.ext?.[P], role: 'developer' } } } : {}) });
        }
        break;
      }
      case 'user':
        messages.push({ role: 'user', content: userParts(m.content, `${at}.content`), ...extOf(P, restOf(m, ['role', 'content'])) });
        break;
      case 'assistant':
        messages.push(assistantMessage(m, at));
        break;
      case 'tool': {
        if (typeof m.tool_call_id !== 'string') throw invalid('tool messages need tool_call_id', `${at}.tool_call_id`);
        const part: ToolResultPart = { type: 'tool-result', toolCallId: m.tool_call_id, content: textParts(m.content, `${at}.content`) };
        const prev = messages[messages.length - 1];
        // Consecutive tool messages answer one assistant turn: one IR tool message.
        if (prev?.role === 'tool') prev.content.push(part);
        else messages.push({ role: 'tool', content: [part] });
        break;
      }
      default:
        throw invalid(`unsupported message role ${JSON.stringify(m.role)}`, `${at}.role`);
    }
  });
  return { system, messages };
}

function textParts(content: unknown, at: string): TextPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid('content must be a string or an array of parts', at);
  return content.map((p, j) => {
    if (!isRecord(p) || p.type !== 'text' || typeof p.text !== 'string') {
      throw invalid(`only text parts are allowed here (got ${JSON.stringify(isRecord(p) ? p.type : p)})`, `${at}.${j}`);
    }
    return { type: 'text', text: p.text, ...extOf(P, restOf(p, ['type', 'text'])) };
  });
}

function userParts(content: unknown, at: string): UserPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid('content must be a string or an array of parts', at);
  return content.map((p, j): UserPart => {
    if (isRecord(p) && p.type === 'image_url') return imagePart(p.image_url, `${at}.${j}.image_url`);
    if (isRecord(p) && p.type === 'text' && typeof p.text === 'string') {
      return { type: 'text', text: p.text, ...extOf(P, restOf(p, ['type', 'text'])) };
    }
    throw invalid(`unsupported content part type ${JSON.stringify(isRecord(p) ? p.type : p)}`, `${at}.${j}.type`);
  });
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function imagePart(img: unknown, at: string): ImagePart {
  if (!isRecord(img) || typeof img.url !== 'string') throw invalid('image_url.url must be a string', `${at}.url`);
  const ext = { ...(typeof img.detail === 'string' ? { detail: img.detail } : {}), ...extOf(P, restOf(img, typeof img.detail === 'string' ? ['url', 'detail'] : ['url'])) };
  const data = DATA_URL.exec(img.url);
  if (data) return { type: 'image', source: { kind: 'base64', mediaType: data[1], data: data[2] }, ...ext };
  if (/^https?:\/\//i.test(img.url)) return { type: 'image', source: { kind: 'url', url: img.url }, ...ext };
  throw invalid('image_url.url must be an http(s) URL or a base64 data: URL', `${at}.url`);
}

function assistantMessage(m: JsonObject, at: string): Message {
  const parts: AssistantPart[] = reasoningParts(m, at);
  if (typeof m.content === 'string') {
    if (m.content !== '') parts.push({ type: 'text', text: m.content });
  } else if (Array.isArray(m.content)) {
    m.content.forEach((p, j) => {
      if (isRecord(p) && p.type === 'text' && typeof p.text === 'string') parts.push({ type: 'text', text: p.text });
      else if (isRecord(p) && p.type === 'refusal' && typeof p.refusal === 'string') parts.push(refusalText(p.refusal));
      else throw invalid('assistant content parts must be text or refusal', `${at}.content.${j}`);
    });
  } else if (m.content != null) {
    throw invalid('content must be a string, an array of parts or null', `${at}.content`);
  }
  if (typeof m.refusal === 'string' && m.refusal !== '') parts.push(refusalText(m.refusal));
  if (Array.isArray(m.tool_calls)) {
    m.tool_calls.forEach((c, j) => {
      const fn = isRecord(c) ? c.function : undefined;
      if (!isRecord(c) || typeof c.id !== 'string' || !isRecord(fn) || typeof fn.name !== 'string') {
        throw invalid('tool_calls entries need id and function.name', `${at}.tool_calls.${j}`);
      }
      const args = typeof fn.arguments === 'string' && fn.arguments.trim() !== '' ? fn.arguments : '{}';
      parts.push({ type: 'tool-call', id: c.id, name: fn.name, arguments: args });
    });
  }
  const known = ['role', 'content', 'refusal', 'tool_calls', 'reasoning_content', 'thinking_blocks'];
  return { role: 'assistant', content: parts, ...extOf(P, restOf(m, known)) };
}

/** A refusal the model gave earlier: text for any upstream, marked as a refusal in the IR. */
function refusalText(text: string): TextPart {
  return { type: 'text', text, refusal: true };
}

/** `thinking_blocks` (signed, from an Anthropic model) win over plain `reasoning_content`. */
/**
 * `thinking_blocks` when present, else `reasoning_content`. A lone thinking block sent back with
 * empty text (the block as a signature-only stream delta showed it) takes its text from
 * `reasoning_content`, so the signature still matches what it signed.
 */
function reasoningParts(m: JsonObject, at: string): AssistantPart[] {
  if (Array.isArray(m.thinking_blocks) && m.thinking_blocks.length > 0) {
    const lone = m.thinking_blocks.length === 1 && typeof m.reasoning_content === 'string';
    return m.thinking_blocks.map((b, j): AssistantPart => {
      const bAt = `${at}.thinking_blocks.${j}`;
      if (isRecord(b) && b.type === 'thinking' && typeof b.thinking === 'string') {
        const signed = typeof b.signature === 'string' && b.signature !== '';
        // Not for a sealed signature: its block's text is its own (a Gemini signature-only part).
        const sealed = signed && (b.signature as string).startsWith(ENVELOPE_PREFIX);
        const text = b.thinking === '' && lone && !sealed ? (m.reasoning_content as string) : b.thinking;
        if (!signed) return { type: 'reasoning', text };
        return { type: 'reasoning', ...thinkingBlockFacts(text, b.signature as string, 'signature', `${bAt}.signature`) };
      }
      if (isRecord(b) && b.type === 'redacted_thinking' && typeof b.data === 'string') {
        return { type: 'reasoning', ...thinkingBlockFacts('', b.data, 'redacted', `${bAt}.data`) };
      }
      throw invalid('thinking_blocks entries must be thinking or redacted_thinking blocks', `${at}.thinking_blocks.${j}`);
    });
  }
  if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '') {
    return [{ type: 'reasoning', text: m.reasoning_content }];
  }
  return [];
}

function decodeTools(raw: unknown): Tool[] {
  if (raw == null) return [];
  if (!Array.isArray(raw)) throw invalid('tools must be an array', 'tools');
  return raw.map((t, i) => {
    const fn = isRecord(t) ? t.function : undefined;
    if (!isRecord(t) || t.type !== 'function' || !isRecord(fn) || typeof fn.name !== 'string') {
      throw invalid('only function tools with function.name are supported', `tools.${i}`);
    }
    const params = isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      inputSchema: params,
      ...extOf(P, restOf(fn, ['name', 'description', 'parameters'])),
    };
  });
}

function decodeToolChoice(tc: unknown): ToolChoice | undefined {
  if (tc == null) return undefined;
  if (tc === 'auto' || tc === 'none' || tc === 'required') return { type: tc };
  if (isRecord(tc) && tc.type === 'function' && isRecord(tc.function) && typeof tc.function.name === 'string') {
    return { type: 'tool', name: tc.function.name };
  }
  if (isRecord(tc) && tc.type === 'allowed_tools') return allowedTools(tc.allowed_tools);
  throw invalid('tool_choice must be auto, none, required, {type:"function",function:{name}} or {type:"allowed_tools",allowed_tools}', 'tool_choice');
}

/** `{mode: auto | required, tools: [{type: "function", function: {name}}]}`. */
function allowedTools(a: unknown): ToolChoice {
  const at = 'tool_choice.allowed_tools';
  if (!isRecord(a) || (a.mode !== 'auto' && a.mode !== 'required')) throw invalid(`${at}.mode must be auto or required`, `${at}.mode`);
  if (!Array.isArray(a.tools)) throw invalid(`${at}.tools must be an array`, `${at}.tools`);
  const allowed = a.tools.map((t, i) => {
    const fn = isRecord(t) ? t.function : undefined;
    if (!isRecord(t) || t.type !== 'function' || !isRecord(fn) || typeof fn.name !== 'string') {
      throw invalid('allowed tools must be {type:"function",function:{name}}', `${at}.tools.${i}`);
    }
    return fn.name;
  });
  return { type: a.mode, allowed };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
