import { invalid, namespacedToolName, type Attribution, type Request, type RequestExt, type ResponsesRequestBag, type ResponsesToolBag, type Tool, type ToolChoice } from '../../ir/index.js';
import type { HeaderBag } from '../types.js';
import { decodeInput, EXT } from './decode-input.js';
import { decodeFallbacks } from '../shared/decode-options.js';
import { decodeFast, decodeReasoning } from './decode-options.js';
import { attributionOf } from '../shared/attribution.js';
import { checkTools } from '../shared/check-tools.js';
import { decodeResponsesTextFormat } from '../shared/decode-response-format.js';
import { isRecord, opt } from '../shared/json.js';
import { droppedOf, nativeOnlyOf } from './native-only.js';

type Json = Record<string, unknown>;

/** Same default ceiling as the chat protocol (interface spec, Limits). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 16384;

/** Fields this decoder maps into the IR; every other field travels in `ext['openai-responses'].fields`. */
const CONSUMED = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning',
  'thinking', 'reasoning_effort', 'thinking_effort', 'fast', 'speed', 'fallbacks',
  'max_output_tokens', 'stream', 'temperature', 'top_p', 'previous_response_id',
]);

/** Responses request body (already schema-validated) into the IR. */
export function decodeRequest(body: Json, headers: HeaderBag): Request {
  // An empty id is a model the catalog does not have (404 model_not_found), as on chat and messages.
  if (typeof body.model !== 'string') throw invalid('model is required', 'model');
  rejectStateful(body);
  const { system, messages, otherItems, references } = decodeInput(body.input, body.instructions);
  const { functionTools, hostedTools, params } = decodeTools(body.tools);
  const { reasoning, rawEffort } = decodeReasoning(body);
  const fields: Json = {};
  for (const [k, v] of Object.entries(body)) if (!CONSUMED.has(k)) fields[k] = v;
  const { toolChoice, raw: rawChoice } = decodeToolChoice(body.tool_choice);
  const bag: ResponsesRequestBag = {
    ...(Object.keys(fields).length ? { fields } : {}),
    ...(hostedTools.length ? { hostedTools } : {}),
    ...(otherItems.length ? { otherItems } : {}),
    ...opt('reasoningEffort', rawEffort),
    ...opt('toolChoice', rawChoice),
    ...opt('previousResponseId', typeof body.previous_response_id === 'string' ? body.previous_response_id : undefined),
  };
  checkTools(functionTools, toolChoice, (i) => params[i], 'tool_choice.name');
  const maxTokens = decodeMaxTokens(body.max_output_tokens);
  const responseFormat = decodeResponsesTextFormat(body.text);
  return {
    model: body.model,
    system,
    messages,
    tools: functionTools,
    ...(toolChoice ? { toolChoice } : {}),
    ...(typeof body.parallel_tool_calls === 'boolean' ? { parallelToolCalls: body.parallel_tool_calls } : {}),
    maxTokens: maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    maxTokensDefaulted: maxTokens === undefined,
    maxTokensParam: 'max_output_tokens',
    stream: body.stream === true,
    ...numberField(body, 'temperature', 'temperature'),
    ...numberField(body, 'top_p', 'topP'),
    reasoning,
    // `text` itself stays in ext: a Responses upstream gets it whole, and the response echoes it.
    ...(responseFormat ? { responseFormat } : {}),
    fast: decodeFast(body),
    fallbacks: decodeFallbacks(body.fallbacks),
    ext: Object.keys(bag).length ? ({ [EXT]: bag } satisfies RequestExt) : {},
    passHeaders: {},
    ...opt('nativeOnly', nativeOnlyOf(bag)),
    ...opt('dropped', droppedOf(references)),
    ...attribution(headers, body),
  };
}

/** OpenAI's `safety_identifier` replaces `user`; `prompt_cache_key` groups one conversation. */
function attribution(headers: HeaderBag, body: Json): { attribution?: Attribution } {
  const a = attributionOf(headers, [body.safety_identifier, body.user], [body.prompt_cache_key]);
  return a ? { attribution: a } : {};
}

/**
 * Conversations and background responses are not kept. `previous_response_id` and `item_reference`
 * are resolved from stored responses before decoding (handlers/responses.ts); the id stays for the echo.
 */
function rejectStateful(body: Json): void {
  if (body.conversation !== undefined && body.conversation !== null) {
    throw invalid('conversation is not supported: this gateway stores no conversations; send the full input', 'conversation');
  }
  if (body.background === true) {
    throw invalid('background responses are not supported: this gateway stores no responses', 'background');
  }
}

/**
 * Function tools into the IR, hosted tools kept raw. A `namespace` tool (Codex groups its sub-agent
 * tools so) stays raw for a Responses upstream, and each function in it is also an IR function
 * named `<namespace>__<name>` with its `group`, so other upstreams can call it; its custom tools have
 * no IR home. `params` names each IR tool's place in the client's list, for errors.
 */
function decodeTools(tools: unknown): { functionTools: Tool[]; hostedTools: Json[]; params: string[] } {
  const functionTools: Tool[] = [];
  const hostedTools: Json[] = [];
  const params: string[] = [];
  if (tools === undefined || tools === null) return { functionTools, hostedTools, params };
  if (!Array.isArray(tools)) throw invalid('tools must be an array', 'tools');
  tools.forEach((t, i) => {
    if (!isRecord(t)) throw invalid('tools must be objects', `tools.${i}`);
    if (t.type === 'namespace') {
      hostedTools.push(t);
      if (typeof t.name !== 'string' || t.name === '') throw invalid('namespace tools need a name', `tools.${i}.name`);
      if (!Array.isArray(t.tools)) throw invalid('namespace tools need a tools array', `tools.${i}.tools`);
      const namespace = t.name;
      t.tools.forEach((inner, j) => {
        if (!isRecord(inner) || inner.type !== 'function') return;
        functionTools.push(decodeFunctionTool(inner, `tools.${i}.tools.${j}`, namespace));
        params.push(`tools.${i}.tools.${j}.name`);
      });
      return;
    }
    // web_search, file_search, mcp, custom...: no IR home; the pipeline warns when unused.
    if (t.type !== 'function') {
      // Unknown kinds are refused as OpenAI does; they would otherwise be echoed in `tools`.
      if (typeof t.type !== 'string' || !TOOL_KINDS.has(t.type)) throw invalid(`tools[${i}].type ${JSON.stringify(t.type)} is not supported`, `tools.${i}.type`);
      return void hostedTools.push(t);
    }
    functionTools.push(decodeFunctionTool(t, `tools.${i}`));
    params.push(`tools.${i}.name`);
  });
  return { functionTools, hostedTools, params };
}

function decodeFunctionTool(t: Json, at: string, namespace?: string): Tool {
  if (typeof t.name !== 'string' || t.name === '') throw invalid('function tools need a name', `${at}.name`);
  const params = t.parameters ?? { type: 'object', properties: {} };
  if (!isRecord(params)) throw invalid('parameters must be a JSON schema object', `${at}.parameters`);
  const extra: ResponsesToolBag = {};
  if (t.strict !== undefined && t.strict !== null) extra.strict = t.strict;
  for (const [k, v] of Object.entries(t)) {
    if (!['type', 'name', 'description', 'parameters', 'strict'].includes(k)) extra[k] = v;
  }
  return {
    name: namespace === undefined ? t.name : namespacedToolName(namespace, t.name),
    ...(typeof t.description === 'string' ? { description: t.description } : {}),
    inputSchema: params,
    ...(namespace === undefined ? {} : { group: { namespace, name: t.name } }),
    ...(Object.keys(extra).length ? { ext: { [EXT]: extra } } : {}),
  };
}

/** Tool kinds of OpenAI's `Tool` union (official openapi.yaml), besides `function`. */
const TOOL_KINDS = new Set([
  'file_search', 'computer', 'computer_use_preview', 'web_search', 'web_search_2025_08_26', 'mcp',
  'code_interpreter', 'programmatic_tool_calling', 'image_generation', 'local_shell', 'shell', 'custom',
  'namespace', 'tool_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'apply_patch',
]);

/** Object tool_choice kinds of OpenAI's ToolChoiceParam (official openapi.yaml). */
const TOOL_CHOICE_KINDS = new Set([
  'allowed_tools', 'mcp', 'custom', 'programmatic_tool_calling', 'apply_patch', 'shell',
  'file_search', 'web_search_preview', 'computer', 'computer_use_preview', 'computer_use',
  'web_search_preview_2025_03_11', 'image_generation', 'code_interpreter',
]);

/** Modes and `{type:"function", name}` map to the IR; other objects stay raw in ext (`raw`). */
function decodeToolChoice(tc: unknown): { toolChoice?: ToolChoice; raw?: Json } {
  if (tc === undefined || tc === null) return {};
  if (tc === 'auto' || tc === 'none' || tc === 'required') return { toolChoice: { type: tc } };
  if (isRecord(tc) && tc.type === 'function') {
    if (typeof tc.name !== 'string' || tc.name === '') throw invalid('tool_choice.name is required', 'tool_choice.name');
    return { toolChoice: { type: 'tool', name: tc.name } };
  }
  if (isRecord(tc)) {
    // Unknown kinds are refused as OpenAI does; they would otherwise be echoed in `tool_choice`.
    if (typeof tc.type !== 'string' || !TOOL_CHOICE_KINDS.has(tc.type)) throw invalid(`tool_choice.type ${JSON.stringify(tc.type)} is not supported`, 'tool_choice.type');
    // allowed_tools, hosted tool types, custom, mcp: a Responses upstream gets them back as sent.
    if (tc.type !== 'allowed_tools') return { raw: tc };
    if (tc.mode !== 'auto' && tc.mode !== 'required') throw invalid('tool_choice.mode must be auto or required', 'tool_choice.mode');
    // The function tools it allows travel in the IR; a hosted one only reaches a Responses upstream.
    const listed = Array.isArray(tc.tools) ? tc.tools : [];
    const allowed = listed.flatMap((t) => (isRecord(t) && t.type === 'function' && typeof t.name === 'string' ? [t.name] : []));
    return { toolChoice: { type: tc.mode, allowed }, raw: tc };
  }
  throw invalid('tool_choice must be auto, none, required or an object', 'tool_choice');
}

function decodeMaxTokens(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw invalid('max_output_tokens must be a positive integer', 'max_output_tokens');
  }
  return v;
}

function numberField<K extends string>(body: Json, key: string, irKey: K): Partial<Record<K, number>> {
  const v = body[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(`${key} must be a number`, key);
  return { [irKey]: v } as Partial<Record<K, number>>;
}
