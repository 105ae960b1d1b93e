import { allowedTools, MESSAGES_EXT, THINKING_FAMILY, type AssistantPart, type ImagePart, type Message, type Request, type ToolChoice, type UserPart } from '../../ir/index.js';
import type { Json } from '../shared/read-json.js';
import { toolArgumentsObject } from '../shared/tool-arguments.js';
import { encodeThinking } from '../anthropic/encode-request.js';
import { isAnthropicModel } from './api.js';

/**
 * IR Request -> Converse body (`/converse`, `/converse-stream`; the model is in the URL):
 * Bedrock's own model-neutral schema. Thinking is model-specific, so it goes in
 * `additionalModelRequestFields` for Anthropic models only; reasoning goes back (as
 * `reasoningContent`) only to them, and only signed or redacted, as Anthropic requires.
 */
export function encodeConverseRequest(request: Request, model: string): Json {
  const anthropic = isAnthropicModel(model);
  const body: Json = { messages: encodeMessages(request.messages, anthropic) };
  const system = request.system.filter((p) => p.text !== '').map((p) => ({ text: p.text }));
  if (system.length > 0) body.system = system;
  const inference: Json = { maxTokens: request.maxTokens };
  const r = request.reasoning;
  const thinking = anthropic && r.enabled;
  // Claude refuses temperature with thinking on, over Converse as directly.
  if (request.temperature !== undefined && !thinking) inference.temperature = request.temperature;
  if (request.topP !== undefined) inference.topP = request.topP;
  if (request.stopSequences?.length) inference.stopSequences = request.stopSequences;
  body.inferenceConfig = inference;
  const toolConfig = encodeToolConfig(request, body.messages as Json[]);
  if (toolConfig) body.toolConfig = toolConfig;
  const additional = anthropic ? anthropicFields(request) : {};
  if (thinking) additional.thinking = encodeThinking(request)!;
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional;
  return body;
}

/**
 * What Claude takes beyond Converse's schema, in `additionalModelRequestFields`: a messages
 * client's own fields (`top_k`, ...) and its `anthropic-beta` values, as InvokeModel would carry
 * them. Server tools, `metadata` and the fields the IR already carries stay out.
 */
function anthropicFields(request: Request): Json {
  const { metadata: _m, output_config: _o, ...fields } = request.ext[MESSAGES_EXT]?.fields ?? {};
  const betas = (request.passHeaders['anthropic-beta'] ?? '').split(',').map((b) => b.trim()).filter(Boolean);
  return { ...fields, ...(betas.length > 0 ? { anthropic_beta: betas } : {}) };
}

/**
 * Converse has no `none` choice and wants `toolConfig` whenever the history holds tool blocks:
 * with `none`, the tools are declared only when the history needs them (the model may then call
 * one; Bedrock offers no way to forbid it). Allowed tools with `auto` declare only those.
 */
function encodeToolConfig(request: Request, messages: Json[]): Json | undefined {
  const choice = request.toolChoice;
  const allowed = allowedTools(choice);
  const tools = allowed ? request.tools.filter((t) => allowed.includes(t.name)) : request.tools;
  const history = messages.some((m) => (m.content as Json[]).some((b) => 'toolUse' in b || 'toolResult' in b));
  if (tools.length === 0 || (choice?.type === 'none' && !history)) return undefined;
  const specs = tools.map((t) => ({ toolSpec: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), inputSchema: { json: t.inputSchema } } }));
  const toolChoice = choice?.type === 'none' ? undefined : encodeToolChoice(choice);
  return { tools: specs, ...(toolChoice ? { toolChoice } : {}) };
}

function encodeToolChoice(c: ToolChoice | undefined): Json | undefined {
  if (c === undefined) return undefined;
  if (c.type === 'auto') return { auto: {} };
  if (c.type === 'required') return { any: {} };
  if (c.type === 'tool') return { tool: { name: c.name } };
  return undefined;
}

/** Alternating user / assistant turns; tool results ride in user turns; adjacent same-role turns merge. */
function encodeMessages(messages: Message[], anthropic: boolean): Json[] {
  const turns: Array<{ role: 'user' | 'assistant'; content: Json[] }> = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const content =
      m.role === 'assistant'
        ? m.content.flatMap((p) => encodeAssistantPart(p, anthropic))
        : m.role === 'tool'
          ? m.content.map((r) => ({
              toolResult: { toolUseId: r.toolCallId, content: r.content.map(encodeUserPart), ...(r.isError ? { status: 'error' } : {}) },
            }))
          : m.content.filter((p) => p.type !== 'text' || p.text !== '').map(encodeUserPart);
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...content);
    else turns.push({ role, content });
  }
  return turns.filter((t) => t.content.length > 0);
}

function encodeUserPart(p: UserPart): Json {
  return p.type === 'text' ? { text: p.text } : encodeImage(p);
}

/** Converse takes image bytes only (base64 in JSON); a URL image goes as an S3 location when it is one. */
function encodeImage(p: ImagePart): Json {
  if (p.source.kind === 'base64') {
    const format = p.source.mediaType.replace(/^image\//, '').replace('jpg', 'jpeg');
    return { image: { format, source: { bytes: p.source.data } } };
  }
  const format = /\.(png|jpe?g|gif|webp)(?:[?#].*)?$/i.exec(p.source.url)?.[1]?.toLowerCase().replace('jpg', 'jpeg') ?? 'png';
  return p.source.url.startsWith('s3://') ? { image: { format, source: { s3Location: { uri: p.source.url } } } } : { text: `[image: ${p.source.url}]` };
}

function encodeAssistantPart(p: AssistantPart, anthropic: boolean): Json[] {
  switch (p.type) {
    case 'text':
      return p.text === '' ? [] : [{ text: p.text }];
    case 'tool-call':
      return [{ toolUse: { toolUseId: p.id, name: p.name, input: toolArgumentsObject(p.arguments) } }];
    case 'reasoning':
      if (!anthropic || p.origin?.provider !== THINKING_FAMILY) return [];
      // Converse's redactedContent is bytes (base64 in JSON): Anthropic's redacted `data`, as text.
      if (p.redacted !== undefined) return [{ reasoningContent: { redactedContent: Buffer.from(p.redacted, 'utf8').toString('base64') } }];
      if (p.signature === undefined) return [];
      return [{ reasoningContent: { reasoningText: { text: p.text, signature: p.signature } } }];
    default:
      return [];
  }
}
