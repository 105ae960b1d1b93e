import {
  invalid,
  namespacedToolName,
  RESPONSES_EXT,
  type ResponsesItemBag,
  type ResponsesRequestBag,
  type ResponsesReasoningBag,
  type AssistantPart,
  type ImagePart,
  type Message,
  type TextPart,
  type ToolResultPart,
} from '../../ir/index.js';
import { decodeEncryptedContent, RESPONSES_ORIGIN } from '../shared/reasoning-envelope.js';
import { isRecord } from '../shared/json.js';
import { decodeCompaction } from './compaction.js';

/** This protocol's extension bag key (bags.ts types what it holds on the request, items and tools). */
export const EXT = RESPONSES_EXT;

type Json = Record<string, unknown>;

export interface DecodedInput {
  system: TextPart[];
  messages: Message[];
  /** Input items with no IR home (hosted tool calls, custom tool calls...), with their IR position. */
  otherItems: NonNullable<ResponsesRequestBag['otherItems']>;
  /** Ids of `item_reference` items, which cannot be resolved without stored responses. */
  references: string[];
}

/**
 * Responses `input` (a string or a list of items) plus `instructions` into IR system parts and
 * messages. Consecutive assistant-side items (message, reasoning, function_call) merge into one
 * assistant message, consecutive function_call_output items into one tool message.
 */
export function decodeInput(input: unknown, instructions: unknown): DecodedInput {
  const out: DecodedInput = { system: [], messages: [], otherItems: [], references: [] };
  if (typeof instructions === 'string' && instructions !== '') {
    out.system.push({ type: 'text', text: instructions });
  } else if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
    throw invalid('instructions must be a string', 'instructions');
  }
  if (typeof input === 'string') {
    out.messages.push({ role: 'user', content: [{ type: 'text', text: input }] });
    return out;
  }
  // Without stored responses there is nothing to continue from, so input is required.
  if (!Array.isArray(input)) throw invalid('input must be a string or an array of items', 'input');
  input.forEach((item, i) => decodeItem(out, item, `input.${i}`));
  return out;
}

function decodeItem(out: DecodedInput, item: unknown, param: string): void {
  if (!isRecord(item)) throw invalid('input items must be objects', param);
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message':
      return decodeMessage(out, item, param);
    case 'function_call':
      return pushAssistant(out, decodeFunctionCall(item, param));
    case 'function_call_output':
      return pushTool(out, decodeFunctionCallOutput(item, param));
    case 'reasoning':
      return pushAssistant(out, decodeReasoning(item, param));
    case 'item_reference':
      // Nothing is stored to resolve it from. Clients that default to store:true (the AI SDK)
      // reference their own earlier output this way, so it is dropped with a warning, not a 400.
      if (typeof item.id !== 'string') throw invalid('item_reference needs an id', `${param}.id`);
      out.references.push(item.id);
      return;
    case 'compaction': {
      // The gateway's own (POST /v1/responses/compact) carry a summary any model can be given.
      const summary = decodeCompaction(item.encrypted_content);
      if (summary !== undefined) return void out.messages.push({ role: 'user', content: [{ type: 'text', text: summary }] });
      out.otherItems.push({ position: out.messages.length, item });
      return;
    }
    default:
      if (typeof type !== 'string') throw invalid('input item has no type', `${param}.type`);
      // Hosted tool calls and the like: no IR home, kept for a same-protocol upstream.
      out.otherItems.push({ position: out.messages.length, item });
  }
}

function decodeMessage(out: DecodedInput, item: Json, param: string): void {
  const role = item.role;
  const content = item.content;
  if (role === 'system' || role === 'developer') {
    // Hoisted: the response echoes `instructions` without them, and a Responses upstream gets them back as developer messages.
    for (const t of textsOf(content, `${param}.content`, ['input_text'])) out.system.push({ type: 'text', text: t, hoisted: true });
    return;
  }
  if (role === 'user') {
    out.messages.push({ role: 'user', content: userParts(content, `${param}.content`) });
    return;
  }
  if (role === 'assistant') {
    const texts = textsOf(content, `${param}.content`, ['output_text', 'input_text', 'refusal']);
    texts.forEach((text, j) => {
      // A replayed refusal part stays text, marked so a Responses upstream gets it back as one.
      const refusal = Array.isArray(content) && (content[j] as Json).type === 'refusal';
      pushAssistant(out, { type: 'text', text, ...(refusal ? { refusal: true } : {}) });
    });
    return;
  }
  throw invalid(`unsupported message role: ${String(role)}`, `${param}.role`);
}

/** Text of a content string or of text-like parts; anything else in that list is a 400. */
function textsOf(content: unknown, param: string, allowed: string[]): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) throw invalid('content must be a string or an array of parts', param);
  return content.map((p, j) => {
    if (!isRecord(p) || !allowed.includes(String(p.type))) {
      throw invalid(`unsupported content part here: ${isRecord(p) ? String(p.type) : typeof p}`, `${param}.${j}`);
    }
    const text = p.type === 'refusal' ? p.refusal : p.text;
    if (typeof text !== 'string') throw invalid('text part without text', `${param}.${j}`);
    return text;
  });
}

function userParts(content: unknown, param: string): Array<TextPart | ImagePart> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid('content must be a string or an array of parts', param);
  return content.map((p, j) => decodeUserPart(p, `${param}.${j}`));
}

function decodeUserPart(p: unknown, param: string): TextPart | ImagePart {
  if (!isRecord(p)) throw invalid('content parts must be objects', param);
  if (p.type === 'input_text' || p.type === 'output_text') {
    if (typeof p.text !== 'string') throw invalid('input_text without text', `${param}.text`);
    return { type: 'text', text: p.text };
  }
  if (p.type === 'input_image') return decodeImage(p, param);
  if (p.type === 'input_file') throw invalid('input_file parts are not supported by this gateway', param);
  throw invalid(`unsupported content part: ${String(p.type)}`, `${param}.type`);
}

function decodeImage(p: Json, param: string): ImagePart {
  if (p.file_id !== undefined && p.file_id !== null) {
    throw invalid('input_image by file_id is not supported (no Files API); send image_url', `${param}.file_id`);
  }
  const url = p.image_url;
  if (typeof url !== 'string' || url === '') throw invalid('input_image needs image_url', `${param}.image_url`);
  const detail = typeof p.detail === 'string' ? { detail: p.detail } : {};
  if (url.startsWith('data:')) {
    const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (!m) throw invalid('image data URL must be base64: data:<media type>;base64,<data>', `${param}.image_url`);
    return { type: 'image', source: { kind: 'base64', mediaType: m[1], data: m[2] }, ...detail };
  }
  if (!/^https?:\/\//i.test(url)) throw invalid('image_url must be an http(s) or data: URL', `${param}.image_url`);
  return { type: 'image', source: { kind: 'url', url }, ...detail };
}

function decodeFunctionCall(item: Json, param: string): AssistantPart {
  for (const k of ['call_id', 'name', 'arguments'] as const) {
    if (typeof item[k] !== 'string') throw invalid(`function_call needs a string ${k}`, `${param}.${k}`);
  }
  // A call to a function in a namespace tool carries `namespace`: the IR names it as it names the tool.
  if (item.namespace !== undefined && item.namespace !== null && typeof item.namespace !== 'string') throw invalid('function_call.namespace must be a string', `${param}.namespace`);
  const extra = itemBag(item);
  return {
    type: 'tool-call',
    id: item.call_id as string,
    name: typeof item.namespace === 'string' ? namespacedToolName(item.namespace, item.name as string) : (item.name as string),
    arguments: item.arguments as string,
    ...(extra ? { ext: { [EXT]: extra } } : {}),
  };
}

function decodeFunctionCallOutput(item: Json, param: string): ToolResultPart {
  if (typeof item.call_id !== 'string') throw invalid('function_call_output needs call_id', `${param}.call_id`);
  const output = item.output;
  let content: Array<TextPart | ImagePart>;
  if (typeof output === 'string') content = [{ type: 'text', text: output }];
  else if (Array.isArray(output)) content = output.map((p, j) => decodeUserPart(p, `${param}.output.${j}`));
  else throw invalid('function_call_output.output must be a string or an array of parts', `${param}.output`);
  const extra = itemBag(item);
  return { type: 'tool-result', toolCallId: item.call_id, content, ...(extra ? { ext: { [EXT]: extra } } : {}) };
}

function decodeReasoning(item: Json, param: string): AssistantPart {
  const summary = item.summary ?? [];
  if (!Array.isArray(summary)) throw invalid('reasoning.summary must be an array', `${param}.summary`);
  const texts = summary.map((s, j) => {
    if (!isRecord(s) || typeof s.text !== 'string') throw invalid('summary parts need text', `${param}.summary.${j}`);
    return s.text;
  });
  const enc = item.encrypted_content;
  if (enc !== undefined && enc !== null && typeof enc !== 'string') {
    throw invalid('encrypted_content must be a string', `${param}.encrypted_content`);
  }
  // Summary boundaries and raw reasoning `content` have no IR home: kept in ext for passthrough.
  const ext: ResponsesReasoningBag = {};
  if (typeof item.id === 'string') ext.id = item.id;
  if (texts.length > 1) ext.summaryParts = texts;
  if (item.content !== undefined && item.content !== null) ext.content = item.content;
  const text = texts.join('\n\n');
  // Envelopes restore another provider's signed reasoning; raw content is a Responses upstream's.
  const facts = typeof enc === 'string' ? decodeEncryptedContent(enc, text, `${param}.encrypted_content`) : { text, origin: RESPONSES_ORIGIN };
  return { type: 'reasoning', ...facts, ext: { [EXT]: ext } };
}

function pushAssistant(out: DecodedInput, part: AssistantPart): void {
  const last = out.messages[out.messages.length - 1];
  if (last?.role === 'assistant') last.content.push(part);
  else out.messages.push({ role: 'assistant', content: [part] });
}

function pushTool(out: DecodedInput, part: ToolResultPart): void {
  const last = out.messages[out.messages.length - 1];
  if (last?.role === 'tool') last.content.push(part);
  else out.messages.push({ role: 'tool', content: [part] });
}

/** A function call's or output's `id` and `status`, and its `namespace` when a string, as far as given. */
function itemBag(item: Json): ResponsesItemBag | undefined {
  const o: ResponsesItemBag = {};
  if (item.id !== undefined && item.id !== null) o.id = item.id;
  if (item.status !== undefined && item.status !== null) o.status = item.status;
  if (typeof item.namespace === 'string') o.namespace = item.namespace;
  return Object.keys(o).length ? o : undefined;
}
