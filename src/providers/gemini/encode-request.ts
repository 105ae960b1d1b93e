import { toolArgumentsObject } from '../shared/tool-arguments.js';
import { allowedTools, type AssistantPart, type ImagePart, type Message, type Request, type Tool, type ToolChoice, type ToolResultPart, type UserPart } from '../../ir/index.js';
import type { Json } from '../shared/read-json.js';
import { GEMINI_FAMILY } from './api.js';

/**
 * IR Request -> `generateContent` body (the model is in the URL). Schemas go as JSON Schema
 * (`parametersJsonSchema`, `responseJsonSchema`), so nothing of a client's schema is dropped to
 * fit Gemini's OpenAPI subset. Thinking asks for thought summaries (`includeThoughts`).
 */
export function encodeRequest(request: Request): Json {
  const body: Json = { contents: encodeContents(request.messages) };
  const system = request.system.map((p) => p.text).filter((t) => t !== '');
  if (system.length > 0) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  // Gemini has no allowed-tools choice: with `auto`, the tools it does not allow are left out.
  const allowed = allowedTools(request.toolChoice);
  const tools = allowed && request.toolChoice?.type === 'auto' ? request.tools.filter((t) => allowed.includes(t.name)) : request.tools;
  if (tools.length > 0) body.tools = [{ functionDeclarations: tools.map(encodeTool) }];
  const toolConfig = encodeToolChoice(request.toolChoice);
  if (toolConfig && (tools.length > 0 || request.toolChoice?.type === 'none')) body.toolConfig = toolConfig;
  body.generationConfig = encodeGenerationConfig(request);
  return body;
}

function encodeGenerationConfig(request: Request): Json {
  const config: Json = { maxOutputTokens: request.maxTokens };
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.stopSequences?.length) config.stopSequences = request.stopSequences;
  const format = request.responseFormat;
  if (format) {
    config.responseMimeType = 'application/json';
    if (format.type === 'json_schema') config.responseJsonSchema = format.schema;
  }
  const r = request.reasoning;
  // -1 is Gemini's dynamic budget (the model decides), for adaptive thinking or no budget given.
  if (r.enabled) config.thinkingConfig = { thinkingBudget: r.adaptive || r.budgetTokens === undefined ? -1 : r.budgetTokens, includeThoughts: true };
  return config;
}

function encodeTool(t: Tool): Json {
  return { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parametersJsonSchema: t.inputSchema };
}

function encodeToolChoice(c: ToolChoice | undefined): Json | undefined {
  if (c === undefined) return undefined;
  switch (c.type) {
    case 'none':
      return { functionCallingConfig: { mode: 'NONE' } };
    case 'auto':
      return { functionCallingConfig: { mode: 'AUTO' } };
    case 'required':
      return { functionCallingConfig: { mode: 'ANY', ...(c.allowed ? { allowedFunctionNames: c.allowed } : {}) } };
    case 'tool':
      return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [c.name] } };
  }
}

/**
 * IR messages -> `contents` of alternating `user` / `model` turns (adjacent same-role turns merge).
 * Tool results become `functionResponse` parts in a user turn, named after the call they answer:
 * by its id where the conversation has it, else by order among the calls of the last model turn
 * not yet answered (Gemini's calls have no ids; LiteLLM maps them back the same way).
 */
function encodeContents(messages: Message[]): Json[] {
  const names = new Map<string, string>();
  let unanswered: string[] = [];
  const turns: Array<{ role: 'user' | 'model'; parts: Json[] }> = [];
  for (const m of messages) {
    let parts: Json[];
    if (m.role === 'assistant') {
      const calls = m.content.filter((p) => p.type === 'tool-call');
      for (const c of calls) names.set(c.id, c.name);
      unanswered = calls.map((c) => c.id);
      parts = encodeAssistant(m.content);
    } else if (m.role === 'tool') {
      parts = m.content.flatMap((r) => {
        const id = names.has(r.toolCallId) ? r.toolCallId : unanswered[0];
        unanswered = unanswered.filter((u) => u !== id);
        return encodeToolResult(r, names.get(id ?? '') ?? r.toolCallId);
      });
    } else {
      parts = m.content.flatMap(encodeUserPart);
    }
    const role = m.role === 'assistant' ? 'model' : 'user';
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else turns.push({ role, parts });
  }
  return turns.filter((t) => t.parts.length > 0);
}

function encodeUserPart(p: UserPart): Json[] {
  if (p.type === 'text') return p.text === '' ? [] : [{ text: p.text }];
  return [encodeImage(p)];
}

function encodeImage(p: ImagePart): Json {
  if (p.source.kind === 'base64') return { inlineData: { mimeType: p.source.mediaType, data: p.source.data } };
  const mimeType = mimeOfUrl(p.source.url);
  return { fileData: { ...(mimeType ? { mimeType } : {}), fileUri: p.source.url } };
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', heic: 'image/heic', heif: 'image/heif' };

function mimeOfUrl(url: string): string | undefined {
  const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  return ext ? IMAGE_TYPES[ext] : undefined;
}

/** `response` is an object: the text under `output`, or under `error` for a failed call (Gemini's convention). */
function encodeToolResult(r: ToolResultPart, name: string): Json[] {
  const text = r.content.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
  const images = r.content.filter((p): p is ImagePart => p.type === 'image').map(encodeImage);
  return [{ functionResponse: { name, response: r.isError ? { error: text } : { output: text } } }, ...images];
}

/**
 * A model turn. Reasoning Gemini produced goes back as it came: a thought summary as a
 * `thought: true` part, a signature-only block as the `thoughtSignature` of the part after it (an
 * empty text part when it was last). Reasoning from any other family is not Gemini's and stays out.
 */
function encodeAssistant(content: AssistantPart[]): Json[] {
  const parts: Json[] = [];
  let signature: string | undefined;
  const signed = (part: Json): Json => {
    const out = signature === undefined ? part : { ...part, thoughtSignature: signature };
    signature = undefined;
    return out;
  };
  for (const p of content) {
    switch (p.type) {
      case 'reasoning':
        if (p.origin?.provider !== GEMINI_FAMILY) break;
        if (p.text !== '') parts.push({ text: p.text, thought: true, ...(p.signature !== undefined ? { thoughtSignature: p.signature } : {}) });
        else if (p.signature !== undefined) signature = p.signature;
        break;
      case 'text':
        if (p.text !== '' || signature !== undefined) parts.push(signed({ text: p.text }));
        break;
      case 'tool-call':
        parts.push(signed({ functionCall: { name: p.name, args: toolArgumentsObject(p.arguments) } }));
        break;
      case 'fallback':
        break;
    }
  }
  if (signature !== undefined) parts.push(signed({ text: '' }));
  return parts;
}
