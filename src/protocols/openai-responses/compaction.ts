/**
 * `POST /v1/responses/compact`, the pure part: the request the routed model is asked to summarise
 * the conversation with, the compacted response built from its answer (every user message, then
 * one `compaction` item, as OpenAI's), and the gateway's compaction items read back as input.
 *
 * A compaction item's `encrypted_content` is opaque to the client, as OpenAI's: the gateway's carry
 * the summary under a prefix of their own (`swy-compaction-v1.` and base64url), so any model
 * behind the gateway can be given it later. Another server's compaction items (OpenAI's own,
 * really encrypted) are not read: they travel as any item without an IR home does.
 */
import { GatewayError } from '../../ir/index.js';

type Json = Record<string, unknown>;

const PREFIX = 'swy-compaction-v1.';

/** What the model is asked after the conversation. */
export const COMPACTION_PROMPT = [
  'Compact the conversation above so that it can continue without it.',
  'Write a summary that keeps every fact, decision, open question, file, identifier and value the user or the assistant stated,',
  'what each tool call did and what it returned, and what the assistant was about to do next.',
  'Answer with the summary only.',
].join(' ');

/** How a summary reaches the model when a compaction item comes back as input. */
const SUMMARY_LEAD = 'Summary of the earlier conversation, which was compacted:\n\n';

export function encodeCompaction(summary: string): string {
  return PREFIX + Buffer.from(summary, 'utf8').toString('base64url');
}

/** The summary a gateway-made compaction item carries; undefined for another server's. */
export function decodeCompaction(encrypted: unknown): string | undefined {
  if (typeof encrypted !== 'string' || !encrypted.startsWith(PREFIX)) return undefined;
  return SUMMARY_LEAD + Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8');
}

/** Fields of the compact request that go on to the model call as they are. */
const CARRIED = ['model', 'instructions', 'prompt_cache_key', 'service_tier', 'fallbacks', 'fast', 'speed'];

/** The Responses request that asks the routed model for the summary of `conversation`. */
export function compactionRequest(body: Json, conversation: Json[]): Json {
  if (conversation.length === 0) {
    throw new GatewayError('invalid_request', 'Nothing to compact: give input or previous_response_id', { param: 'input' });
  }
  const carried = Object.fromEntries(CARRIED.filter((k) => body[k] !== undefined && body[k] !== null).map((k) => [k, body[k]]));
  return {
    ...carried,
    input: [...conversation, { type: 'message', role: 'user', content: [{ type: 'input_text', text: COMPACTION_PROMPT }] }],
    store: false,
    stream: false,
  };
}

/**
 * The compacted response: the conversation's user messages (with ids, as stored items have), then
 * the compaction item carrying the model's summary, with the model call's usage. A model that
 * answered no text, or stopped before its summary was whole, has not compacted the conversation
 * (a cut summary would lose part of it silently): a 502, billed as its call was.
 */
export function compactedResponse(answer: Json, conversation: Json[], idBase: string): Json {
  const summary = outputText(answer);
  if (summary === '' || answer.status !== 'completed') {
    const why = summary === '' ? 'answered no summary' : `stopped before its summary was complete (${String((answer.incomplete_details as Json | null)?.reason ?? answer.status)})`;
    throw new GatewayError('bad_gateway', `The model ${why}: the conversation was not compacted`);
  }
  const users = conversation.filter(isUserMessage).map((m, i) => ({
    id: typeof m.id === 'string' && m.id !== '' ? m.id : `msg_${idBase}_u${i}`,
    type: 'message',
    role: 'user',
    status: 'completed',
    content: typeof m.content === 'string' ? [{ type: 'input_text', text: m.content }] : m.content,
  }));
  return {
    id: answer.id,
    object: 'response.compaction',
    created_at: answer.created_at,
    output: [...users, { id: `cmp_${idBase}`, type: 'compaction', encrypted_content: encodeCompaction(summary) }],
    usage: answer.usage,
    ...(answer.switchyard !== undefined ? { switchyard: answer.switchyard } : {}),
  };
}

function isUserMessage(item: Json): boolean {
  return (item.type === undefined || item.type === 'message') && item.role === 'user';
}

function outputText(answer: Json): string {
  const output = Array.isArray(answer.output) ? (answer.output as Json[]) : [];
  return output
    .filter((i) => i.type === 'message')
    .flatMap((i) => (Array.isArray(i.content) ? (i.content as Json[]) : []))
    .filter((p) => p.type === 'output_text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('')
    .trim();
}
