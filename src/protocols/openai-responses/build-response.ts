import { inputTotal, type Attempt, type Finish, type Request, type Usage } from '../../ir/index.js';
import { costField } from '../shared/cost-field.js';
import { encryptedContentOf, type ReasoningFacts } from '../shared/reasoning-envelope.js';
import type { EncodeMeta } from '../types.js';
import { EXT } from './decode-input.js';

type Json = Record<string, unknown>;
export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** Deterministic ids: the request id (alphanumerics only) and the item's output position. */
export const responseId = (meta: EncodeMeta) => `resp_${idBase(meta)}`;
export const itemId = (meta: EncodeMeta, prefix: 'msg' | 'rs' | 'fc', index: number) => `${prefix}_${idBase(meta)}_${index}`;
const idBase = (meta: EncodeMeta) => idBaseOf(meta.requestId);
/** The alphanumerics of a request id: the base of its response's and items' ids. */
export const idBaseOf = (requestId: string) => requestId.replace(/[^A-Za-z0-9]/g, '');

export function encodeUsage(u: Usage, cost?: bigint): Json {
  const input = inputTotal(u);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.input.cacheRead, cache_write_tokens: u.input.cacheWrite },
    output_tokens: u.output.total,
    output_tokens_details: { reasoning_tokens: u.output.reasoning },
    total_tokens: input + u.output.total,
    ...costField(cost),
  };
}

/** Finish into Responses status: ceiling and refusal are `incomplete`, with the reason. */
export function statusOf(finish: Finish): { status: ResponseStatus; incomplete: Json | null } {
  if (finish.unified === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finish.unified === 'refusal') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

/** `{encrypted_content}` when the reasoning carries something opaque (see reasoning-envelope.ts). */
export function encryptedContentFor(r: ReasoningFacts): Json {
  const enc = encryptedContentOf(r);
  return enc === undefined ? {} : { encrypted_content: enc };
}

export interface ShellInput {
  status: ResponseStatus;
  model: string;
  output: Json[];
  usage: Usage | null;
  /** The request's cost (nanodollars), with the usage. */
  cost?: bigint;
  incomplete: Json | null;
  error: { code: string; message: string } | null;
  /** Present on final responses only. */
  switchyard?: { attempts: Attempt[]; servedVariant?: 'standard' | 'fast'; warnings?: string[] };
}

/** The Response object, echoing the request's settings like the real API (see transcripts). */
export function buildResponse(meta: EncodeMeta, s: ShellInput): Json {
  const req = meta.request;
  const bag = req.ext[EXT];
  const fields = bag?.fields ?? {};
  return {
    id: responseId(meta),
    object: 'response',
    created_at: meta.created,
    status: s.status,
    background: false,
    error: s.error,
    incomplete_details: s.incomplete,
    instructions: instructionsOf(req),
    max_output_tokens: req.maxTokensDefaulted ? null : req.maxTokens,
    model: s.model,
    output: s.output,
    parallel_tool_calls: req.parallelToolCalls ?? true,
    previous_response_id: bag?.previousResponseId ?? null,
    reasoning: { effort: effortOf(req), summary: req.reasoning.summary ?? null },
    // Stored unless the client said otherwise (OpenAI's default); handlers/responses.ts stores it.
    store: fields.store !== false,
    temperature: req.temperature ?? 1,
    text: fields.text ?? { format: { type: 'text' } },
    tool_choice: toolChoiceOf(req),
    tools: toolsOf(req),
    top_p: req.topP ?? 1,
    truncation: 'disabled',
    // The live API sends `usage: null` / `user: null`; the official schema has neither nullable,
    // so they are left out until known (SDK types mark both optional).
    ...(s.usage ? { usage: encodeUsage(s.usage, s.cost) } : {}),
    ...(typeof fields.user === 'string' ? { user: fields.user } : {}),
    metadata: fields.metadata ?? {},
    ...(s.switchyard
      ? {
          switchyard: {
            attempts: s.switchyard.attempts,
            served_variant: s.switchyard.servedVariant ?? 'standard',
            ...(s.switchyard.warnings?.length ? { warnings: s.switchyard.warnings } : {}),
          },
        }
      : {}),
  };
}

function instructionsOf(req: Request): string | null {
  const parts = req.system.filter((p) => !p.hoisted);
  return parts.length ? parts.map((p) => p.text).join('\n\n') : null;
}

function effortOf(req: Request): string | null {
  const raw = req.ext[EXT]?.reasoningEffort;
  if (raw !== undefined) return raw;
  return req.reasoning.enabled ? (req.reasoning.effort ?? null) : null;
}

function toolChoiceOf(req: Request): unknown {
  const raw = req.ext[EXT]?.toolChoice;
  if (raw !== undefined) return raw;
  const tc = req.toolChoice;
  if (!tc) return 'auto';
  return tc.type === 'tool' ? { type: 'function', name: tc.name } : tc.type;
}

/** The tools as the client sent them: namespaced functions are in their namespace tool, among the hosted ones. */
function toolsOf(req: Request): unknown[] {
  const fns = req.tools.filter((t) => !t.group).map((t) => {
    const ext = t.ext?.[EXT] ?? {};
    return {
      type: 'function',
      name: t.name,
      description: t.description ?? null,
      parameters: t.inputSchema,
      strict: typeof ext.strict === 'boolean' ? ext.strict : null,
    };
  });
  return [...fns, ...(req.ext[EXT]?.hostedTools ?? [])];
}
