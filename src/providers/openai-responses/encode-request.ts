import type { AssistantPart, ImagePart, Message, Request, ResponsesRequestBag, TextPart, Tool, ToolChoice, UserPart } from '../../ir/index.js';
import type { Target } from '../types.js';
import { namespacedToolName, RESPONSES_EXT, RESPONSES_FAMILY, toolGroupOf } from '../../ir/index.js';
import { isObject } from '../shared/read-json.js';
import { stringOption } from '../shared/model-options.js';

type Json = Record<string, unknown>;

/** The Responses client protocol's ext bag (its unmapped fields ride there). */
const EXT_KEY = RESPONSES_EXT;

export interface EncodedRequest {
  body: Json;
  headers: Record<string, string>;
}

/**
 * IR Request + Target -> `/responses` body. Streams when `request.stream` says so (the pipeline
 * decides, see providerCall) and never stores (the gateway keeps no state, and item ids the client
 * holds are the gateway's, not the upstream's). Unknown client fields of a Responses client
 * (`text`, `metadata`, `include`, `prompt_cache_key`, ...) are merged underneath; hosted tools and
 * hosted tool-call items go back as they came.
 */
export function encodeRequest(request: Request, target: Target): EncodedRequest {
  const ext = request.ext[EXT_KEY] ?? {};
  const body: Json = { ...ext.fields };
  body.model = target.upstreamModel;
  const { instructions, developer } = splitSystem(request.system);
  if (instructions !== undefined) body.instructions = instructions;
  body.input = [...developer, ...encodeInput(request.messages, ext.otherItems, request.tools)];
  const hosted = ext.hostedTools ?? [];
  // A namespaced function whose namespace tool goes along is called through it, not on its own.
  const namespaces = new Set(hosted.filter((t) => t.type === 'namespace').map((t) => t.name));
  const tools = [...request.tools.filter((t) => !t.group || !namespaces.has(t.group.namespace)).map(encodeTool), ...hosted];
  if (tools.length > 0) body.tools = tools;
  const choice = ext.toolChoice ?? encodeToolChoice(request.toolChoice);
  if (choice !== undefined && (tools.length > 0 || choice === 'none')) body.tool_choice = choice;
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  body.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  const reasoning = encodeReasoning(request, ext.reasoningEffort);
  if (reasoning) body.reasoning = reasoning;
  if (request.reasoning.enabled) body.include = addInclude(body.include, 'reasoning.encrypted_content');
  // A Responses client's `text` (verbosity, ...) came whole through ext; the format is the IR's.
  if (request.responseFormat) body.text = { ...(isObject(body.text) ? body.text : {}), format: { ...request.responseFormat } };
  const tier = stringOption(target, 'service_tier');
  if (tier) body.service_tier = tier;
  body.store = false;
  body.stream = request.stream;
  return { body, headers: {} };
}

/** Top-level instructions stay instructions; system and developer messages hoisted from the conversation are developer input. */
function splitSystem(system: TextPart[]): { instructions?: string; developer: Json[] } {
  const fromInstructions = system.filter((p) => !p.hoisted);
  const rest = system.filter((p) => p.hoisted);
  // Without top-level instructions, all system text becomes `instructions`.
  if (fromInstructions.length === 0 && rest.length > 0) return { instructions: rest.map((p) => p.text).join('\n\n'), developer: [] };
  return {
    ...(fromInstructions.length ? { instructions: fromInstructions.map((p) => p.text).join('\n\n') } : {}),
    developer: rest.map((p) => ({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: p.text }] })),
  };
}

function encodeInput(messages: Message[], others: ResponsesRequestBag['otherItems'] = [], tools: Tool[]): Json[] {
  const out: Json[] = [];
  messages.forEach((m, i) => {
    for (const o of others) if (o.position === i) out.push(o.item);
    out.push(...encodeMessage(m, tools));
  });
  for (const o of others) if (o.position >= messages.length) out.push(o.item);
  return out;
}

function encodeMessage(m: Message, tools: Tool[]): Json[] {
  switch (m.role) {
    case 'user':
      return [{ type: 'message', role: 'user', content: m.content.map(encodeUserPart) }];
    case 'tool':
      return m.content.map((r) => ({
        type: 'function_call_output',
        call_id: r.toolCallId,
        output: r.content.every((c) => c.type === 'text')
          ? `${r.isError ? 'Error: ' : ''}${r.content.map((c) => (c as TextPart).text).join('\n')}`
          : r.content.map(encodeUserPart),
      }));
    case 'assistant':
      return encodeAssistant(m.content, tools);
  }
}

function encodeUserPart(p: UserPart): Json {
  return p.type === 'text' ? { type: 'input_text', text: p.text } : encodeImage(p);
}

function encodeImage(p: ImagePart): Json {
  const url = p.source.kind === 'base64' ? `data:${p.source.mediaType};base64,${p.source.data}` : p.source.url;
  const detail = p.detail ?? 'auto';
  return { type: 'input_image', image_url: url, detail };
}

/** Consecutive texts form one assistant message item; reasoning and calls are items of their own. */
function encodeAssistant(parts: AssistantPart[], tools: Tool[]): Json[] {
  const out: Json[] = [];
  let message: Json[] | undefined;
  for (const p of parts) {
    if (p.type === 'text') {
      if (p.text === '') continue;
      const part = p.refusal ? { type: 'refusal', refusal: p.text } : { type: 'output_text', text: p.text };
      if (!message) out.push({ type: 'message', role: 'assistant', content: (message = []) });
      message.push(part);
      continue;
    }
    message = undefined;
    if (p.type === 'tool-call') {
      out.push({ type: 'function_call', call_id: p.id, ...callName(p, tools), arguments: p.arguments.trim() === '' ? '{}' : p.arguments });
    } else if (p.type === 'reasoning') {
      const item = encodeReasoningItem(p);
      if (item) out.push(item);
    }
  }
  return out;
}

/** A call to a namespaced function is named by its namespace and own name, as Responses has it. */
function callName(p: Extract<AssistantPart, { type: 'tool-call' }>, tools: Tool[]): Json {
  const group = toolGroupOf(tools, p.name);
  if (group) return { namespace: group.namespace, name: group.name };
  // A call from an earlier turn whose namespace is no longer among the tools.
  const namespace = p.ext?.[EXT_KEY]?.namespace;
  if (typeof namespace === 'string' && p.name.startsWith(namespacedToolName(namespace, ''))) return { namespace, name: p.name.slice(namespacedToolName(namespace, '').length) };
  return { name: p.name };
}

/**
 * Only this kind's own encrypted reasoning goes back, byte for byte. Without stored responses a
 * reasoning item needs its encrypted_content, so summary-only or foreign reasoning is dropped.
 */
function encodeReasoningItem(p: Extract<AssistantPart, { type: 'reasoning' }>): Json | undefined {
  if (p.origin?.provider !== RESPONSES_FAMILY) return undefined;
  const enc = p.signature ?? p.redacted;
  if (enc === undefined) return undefined;
  const texts = p.ext?.[EXT_KEY]?.summaryParts ?? (p.text === '' ? [] : [p.text]);
  return { type: 'reasoning', summary: texts.map((text) => ({ type: 'summary_text', text })), encrypted_content: enc };
}

function encodeTool(t: Tool): Json {
  const extra = t.ext?.[EXT_KEY] ?? {};
  return {
    type: 'function',
    name: t.name,
    ...(t.description !== undefined ? { description: t.description } : {}),
    parameters: t.inputSchema,
    strict: typeof extra.strict === 'boolean' ? extra.strict : false,
  };
}

function encodeToolChoice(c: ToolChoice | undefined): unknown {
  if (!c) return undefined;
  if (c.type === 'tool') return { type: 'function', name: c.name };
  if (c.type !== 'none' && c.allowed) return { type: 'allowed_tools', mode: c.type, tools: c.allowed.map((name) => ({ type: 'function', name })) };
  return c.type;
}

/** The client's raw effort when it spoke Responses; else the IR effort (`none` when disabled on request). */
function encodeReasoning(request: Request, rawEffort: string | undefined): Json | undefined {
  const r = request.reasoning;
  if (!r.enabled) return rawEffort === 'none' ? { effort: 'none' } : undefined;
  const effort = rawEffort !== undefined && rawEffort !== 'none' ? rawEffort : (r.effort ?? effortForBudget(r.budgetTokens));
  return { ...(effort ? { effort } : {}), ...(r.summary ? { summary: r.summary } : {}) };
}

/** A thinking budget (Anthropic-style clients) as the nearest effort. */
function effortForBudget(budget: number | undefined): string | undefined {
  if (budget === undefined) return undefined;
  return budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high';
}

function addInclude(include: unknown, key: string): string[] {
  const list = Array.isArray(include) ? (include as string[]) : [];
  return list.includes(key) ? list : [...list, key];
}
