import { GatewayError } from '../ir/index.js';
import type { ResponseStore } from '../ledger/index.js';
import type { PipelineDeps } from '../pipeline/types.js';
import { idBaseOf } from '../protocols/openai-responses/build-response.js';
import { compactedResponse, compactionRequest } from '../protocols/openai-responses/compaction.js';
import { inputItemsOf, pageInputItems, referencedIds, resolveReferences, withIds } from '../protocols/openai-responses/stored-input.js';
import type { SseFrame } from '../protocols/types.js';
import { handleCompletion } from './complete.js';
import type { HandlerInput, HandlerResult } from './types.js';

type Json = Record<string, unknown>;

/** The stream events that carry a finished response. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * POST /v1/responses with stored state: `previous_response_id` and `item_reference` are resolved
 * from this account's stored responses, whatever provider answered them, and the answer is stored
 * (unless `store: false`) before its last byte goes out, so a follow-up sent on receipt finds it.
 * Reasoning comes back exactly as the client would have sent it, so a signed or encrypted one
 * still reaches only the provider kind that produced it.
 */
export async function createResponse(pipeline: PipelineDeps, store: ResponseStore, input: HandlerInput): Promise<HandlerResult> {
  const accountId = input.auth!.accountId;
  const body = input.body as Json;
  const given = inputItemsOf(body.input);
  const refs = referencedIds(given);
  const resolved = resolveReferences(given, await store.items(accountId, refs));
  const earlier = typeof body.previous_response_id === 'string' ? await previousItems(store, accountId, body.previous_response_id) : [];
  // Nothing to resolve: the body goes on as the client sent it.
  const expanded = refs.length === 0 && earlier.length === 0 ? body : { ...body, input: [...earlier, ...resolved] };
  const result = await handleCompletion(pipeline, { ...input, body: expanded });
  if (body.store === false) return result;
  // Stored with ids (the client's where it gave them), so each can be listed and referenced.
  const ownItems = withIds(resolved, idBaseOf(input.requestId));
  const inputItems = [...earlier, ...ownItems];
  /** True once stored; false when the store failed (the answer still goes out, saying so). */
  const save = async (response: Json): Promise<boolean> => {
    try {
      await store.store(accountId, response as Json & { id: string }, inputItems, ownItems);
      return true;
    } catch (err) {
      pipeline.log.error({ err, requestId: input.requestId }, 'could not store the response');
      return false;
    }
  };
  if (result.kind === 'json' && result.status === 200) {
    if (await save(result.body as Json)) return result;
    const headers = { ...result.headers, 'x-switchyard-warnings': [result.headers?.['x-switchyard-warnings'], NOT_STORED].filter(Boolean).join('; ') };
    return { ...result, headers, body: notStored(result.body as Json) };
  }
  if (result.kind === 'sse') return { ...result, frames: storingFinal(result.frames, save) };
  return result;
}

/**
 * POST /v1/responses/compact: the conversation (`previous_response_id`'s, then `input` with its
 * `item_reference` items resolved) is summarised by the routed model through the same pipeline as
 * any response (routing, fallbacks, billing), and answered as OpenAI's compacted response. Nothing
 * is stored: the client sends the compacted items as the next request's input.
 */
export async function compactResponse(pipeline: PipelineDeps, store: ResponseStore, input: HandlerInput): Promise<HandlerResult> {
  const accountId = input.auth!.accountId;
  const body = input.body as Json;
  const given = inputItemsOf(body.input);
  const resolved = resolveReferences(given, await store.items(accountId, referencedIds(given)));
  const earlier = typeof body.previous_response_id === 'string' ? await previousItems(store, accountId, body.previous_response_id) : [];
  const conversation = [...earlier, ...resolved];
  const result = await handleCompletion(pipeline, { ...input, body: compactionRequest(body, conversation) });
  if (result.kind !== 'json' || result.status !== 200) return result;
  return { ...result, body: compactedResponse(result.body as Json, conversation, idBaseOf(input.requestId)) };
}

/** What a response whose storing failed says about itself (with `store: false`, as one never stored). */
const NOT_STORED = 'the response could not be stored (the database is unavailable): it has store false, and its id cannot be used as previous_response_id or retrieved';

/** The response as `store: false`, with the warning among its `switchyard.warnings`. */
function notStored(response: Json): Json {
  const own = (response.switchyard ?? {}) as Json;
  const warnings = Array.isArray(own.warnings) ? own.warnings : [];
  return { ...response, store: false, switchyard: { ...own, warnings: [...warnings, NOT_STORED] } };
}

/** The conversation a stored response continues: what it was given, then what it answered. */
async function previousItems(store: ResponseStore, accountId: string, id: string): Promise<Json[]> {
  const prev = await store.get(accountId, id);
  if (!prev) throw notFound(id, 'previous_response_id');
  const output = Array.isArray(prev.response.output) ? (prev.response.output as Json[]) : [];
  return [...prev.inputItems, ...output];
}

/**
 * Passes the frames through, storing the final response before its frame is sent; when storing
 * failed, that frame's response says so (`store: false` and a warning).
 */
async function* storingFinal(frames: AsyncGenerator<SseFrame>, save: (response: Json) => Promise<boolean>): AsyncGenerator<SseFrame> {
  for await (const frame of frames) {
    if (frame.event && FINAL_EVENTS.has(frame.event)) {
      const data = JSON.parse(frame.data) as { response?: Json };
      if (data.response && !(await save(data.response))) {
        yield { ...frame, data: JSON.stringify({ ...data, response: notStored(data.response) }) };
        continue;
      }
    }
    yield frame;
  }
}

export async function getResponse(store: ResponseStore, input: HandlerInput): Promise<HandlerResult> {
  const found = await store.get(input.auth!.accountId, input.params.response_id);
  if (!found) throw notFound(input.params.response_id, 'response_id');
  return { kind: 'json', status: 200, body: found.response };
}

export async function deleteResponse(store: ResponseStore, input: HandlerInput): Promise<HandlerResult> {
  const id = input.params.response_id;
  if (!(await store.delete(input.auth!.accountId, id))) throw notFound(id, 'response_id');
  return { kind: 'json', status: 200, body: { id, object: 'response', deleted: true } };
}

export async function listInputItems(store: ResponseStore, input: HandlerInput): Promise<HandlerResult> {
  const found = await store.get(input.auth!.accountId, input.params.response_id);
  if (!found) throw notFound(input.params.response_id, 'response_id');
  const q = input.query;
  const page = pageInputItems(found.inputItems, {
    // Validated against the document (1 to 100); absent: 20, as OpenAI.
    limit: q.limit === undefined ? 20 : Number(q.limit),
    order: q.order === 'asc' ? 'asc' : 'desc',
    ...(typeof q.after === 'string' ? { after: q.after } : {}),
  });
  return { kind: 'json', status: 200, body: page };
}

/** Another account's response is as absent as an unknown one. */
function notFound(id: string, param: string): GatewayError {
  return new GatewayError('not_found', `No response found with id '${id}'.`, { param });
}
