import { AJV_OPTIONS, forValidation } from '../../src/http/openapi-document.js';
/**
 * Test-only: checks what the gateway puts on the wire against generated/openapi.yaml and the
 * interface spec. Bodies are validated with openapi-backend's response validators (by
 * operationId and status); SSE payloads, which OpenAPI 3.1 types only as `string`, against the
 * component schemas `ChatCompletionChunk` and `MessageStreamEvent`; the order of events by hand.
 *
 * `recordingFetch` hands an SDK a fetch that keeps a copy of every raw response, so a test drives
 * the official SDK and still checks the exact bytes it received.
 */
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, ValidationContext } from 'openapi-backend';
import type { ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { DOCUMENT_PATH } from '../../src/http/openapi-document.js';

let backend: Promise<OpenAPIBackend> | undefined;
const compiled = new Map<string, ValidateFunction>();

async function api(): Promise<OpenAPIBackend> {
  backend ??= (async () => {
    const b = new OpenAPIBackend({
      definition: forValidation(parseYaml(readFileSync(DOCUMENT_PATH, 'utf8'))),
      strict: true,
      quick: true,
      ajvOpts: AJV_OPTIONS as any,
    });
    await b.init();
    return b;
  })();
  return backend;
}

/** Errors of `body` against the response schema of `operationId` at `status` ([] = valid). */
export async function bodyErrors(operationId: string, status: number, body: unknown): Promise<string[]> {
  const result = (await api()).validateResponse(body, operationId, status);
  return (result.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Errors of `value` against `#/components/schemas/<name>` ([] = valid). */
export async function schemaErrors(name: string, value: unknown): Promise<string[]> {
  let validate = compiled.get(name);
  if (!validate) {
    const b = await api();
    // After init() the definition is dereferenced, so a component schema compiles on its own.
    const schema = (b.definition as any).components.schemas[name];
    if (!schema) throw new Error(`no component schema ${name}`);
    validate = b.validator.getAjv(ValidationContext.Response).compile(schema);
    compiled.set(name, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

export interface Recorded {
  url: string;
  method: string;
  status: number;
  headers: Headers;
  /** The whole raw body, once the SDK has read all of it. */
  text(): Promise<string>;
  /** What the SDK has read so far (for a stream it aborted). */
  received(): string;
}

/**
 * A fetch for an SDK's `fetch` option that records every response body as the SDK reads it.
 * It passes the body through a TransformStream rather than `clone()`: a tee'd body never
 * finishes cancelling while its twin is unread, which would hang an SDK that breaks out of a
 * stream.
 */
export function recordingFetch(): { fetch: typeof fetch; responses: Recorded[]; last(): Recorded } {
  const responses: Recorded[] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const decoder = new TextDecoder();
    let seen = '';
    let finished!: (text: string) => void;
    const whole = new Promise<string>((resolve) => (finished = resolve));
    const body = res.body?.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += decoder.decode(chunk, { stream: true });
          controller.enqueue(chunk);
        },
        flush() {
          seen += decoder.decode();
          finished(seen);
        },
        // The consumer stopped reading: openai 7 cancels the body at `[DONE]`, before the end of the stream.
        cancel() {
          seen += decoder.decode();
          finished(seen);
        },
      }),
    );
    if (!body) finished('');
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    responses.push({ url, method: init?.method ?? 'GET', status: res.status, headers: res.headers, text: () => whole, received: () => seen });
    return new Response(body ?? null, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return {
    fetch: recording,
    responses,
    last() {
      const r = responses.at(-1);
      if (!r) throw new Error('no response recorded');
      return r;
    },
  };
}

export interface WireEvent {
  event?: string;
  data: string;
}

/** Splits an SSE body into events (the tests' own tiny parser, independent of the gateway's). */
export function parseSseText(text: string): WireEvent[] {
  const events: WireEvent[] = [];
  for (const block of text.replace(/\r\n/g, '\n').split('\n\n')) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const [field, ...rest] = line.split(':');
      const value = rest.join(':').replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) events.push(event === undefined ? { data: data.join('\n') } : { event, data: data.join('\n') });
  }
  return events;
}

function fail(what: string, context: unknown): never {
  throw new Error(`${what}\n  in ${JSON.stringify(context).slice(0, 600)}`);
}

async function mustMatch(schema: string, value: unknown): Promise<void> {
  const errors = await schemaErrors(schema, value);
  if (errors.length) fail(`not a valid ${schema}: ${errors.join('; ')}`, value);
}

export interface ChatStreamSummary {
  chunks: any[];
  text: string;
  reasoning: string;
  toolCalls: Array<{ index: number; id: string; name: string; arguments: string }>;
  finishReason: string;
  usage?: any;
}

/**
 * A chat-completions stream, checked: only `data:` lines, every chunk a valid ChatCompletionChunk
 * with one id, role first, reasoning before answer text, tool-call fragments opened with id and
 * name at contiguous indexes, exactly one finish_reason, the usage chunk (choices: []) only after
 * it, and `[DONE]` last.
 */
export async function checkChatStream(text: string, opts: { includeUsage?: boolean } = {}): Promise<ChatStreamSummary> {
  const events = parseSseText(text);
  if (events.at(-1)?.data !== '[DONE]') fail('the stream does not end with data: [DONE]', events.at(-1));
  const out: ChatStreamSummary = { chunks: [], text: '', reasoning: '', toolCalls: [], finishReason: '' };
  for (const ev of events.slice(0, -1)) {
    if (ev.event !== undefined) fail('a chat stream sends data: lines only', ev);
    if (ev.data === '[DONE]') fail('[DONE] before the end', ev);
    const chunk = JSON.parse(ev.data);
    await mustMatch('ChatCompletionChunk', chunk);
    if (out.chunks.length > 0 && chunk.id !== out.chunks[0].id) fail('chunk ids differ', chunk);
    out.chunks.push(chunk);
    if (chunk.usage) {
      if (out.usage) fail('two usage chunks', chunk);
      if (!out.finishReason || chunk.choices.length !== 0) fail('the usage chunk must follow the finish and have choices: []', chunk);
      out.usage = chunk.usage;
      continue;
    }
    if (out.finishReason) fail('a chunk after the finish_reason chunk', chunk);
    if (chunk.choices.length !== 1) fail('one choice per chunk', chunk);
    const { delta, finish_reason: finish } = chunk.choices[0];
    if (out.chunks.length === 1 && delta.role !== 'assistant') fail('the first chunk must carry role: assistant', chunk);
    if (delta.reasoning_content) {
      if (out.text) fail('reasoning_content after answer text', chunk);
      out.reasoning += delta.reasoning_content;
    }
    if (delta.content) out.text += delta.content;
    for (const tc of delta.tool_calls ?? []) addToolFragment(out, tc, chunk);
    if (finish) out.finishReason = finish;
  }
  if (!out.finishReason) fail('no chunk has a finish_reason', out.chunks.at(-1));
  if (opts.includeUsage && !out.usage) fail('include_usage was asked but no usage chunk came', out.chunks.at(-1));
  if (!opts.includeUsage && out.usage) fail('a usage chunk without include_usage', out.usage);
  return out;
}

function addToolFragment(out: ChatStreamSummary, tc: any, chunk: unknown): void {
  const known = out.toolCalls.find((c) => c.index === tc.index);
  if (!known) {
    if (tc.index !== out.toolCalls.length) fail(`tool call index ${tc.index} is not the next one (${out.toolCalls.length})`, chunk);
    if (!tc.id || tc.type !== 'function' || !tc.function?.name) fail('the first fragment of a tool call needs id, type and function.name', chunk);
    out.toolCalls.push({ index: tc.index, id: tc.id, name: tc.function.name, arguments: tc.function.arguments ?? '' });
    return;
  }
  if (tc.id && tc.id !== known.id) fail('a tool call fragment changed the id', chunk);
  known.arguments += tc.function?.arguments ?? '';
}

export interface MessagesStreamSummary {
  events: any[];
  /** Content blocks rebuilt from the deltas (tool input parsed). */
  blocks: any[];
  startUsage: any;
  stopReason: string | null;
  usage: any;
  /** The error event, when the stream ended with one. */
  error?: any;
}

const DELTA_FOR: Record<string, string[]> = {
  text: ['text_delta', 'citations_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  redacted_thinking: [],
  tool_use: ['input_json_delta'],
  fallback: [],
};

/**
 * A messages stream, checked against the interface spec's order: `event:` names equal to the
 * payload type, every payload a valid MessageStreamEvent, message_start once and first (with the
 * input usage), pings anywhere after it, blocks opened at 0,1,2... one at a time with deltas of
 * their own kind, thinking before text or tool_use, message_delta once after every block closed,
 * message_stop last (or an error event ending the stream).
 */
export async function checkMessagesStream(text: string): Promise<MessagesStreamSummary> {
  const out: MessagesStreamSummary = { events: [], blocks: [], startUsage: undefined, stopReason: null, usage: undefined };
  let open: number | undefined;
  let ended = false;
  let sawAnswer = false;
  for (const ev of parseSseText(text)) {
    const data = JSON.parse(ev.data);
    if (ended) fail('an event after message_stop/error', data);
    if (ev.event !== data.type) fail(`event name ${ev.event} differs from the payload type ${data.type}`, data);
    await mustMatch('MessageStreamEvent', data);
    if (out.events.length === 0 && data.type !== 'message_start') fail('the first event must be message_start', data);
    out.events.push(data);
    switch (data.type) {
      case 'message_start':
        if (out.events.length !== 1) fail('a second message_start', data);
        if (data.message.content.length !== 0 || data.message.stop_reason !== null) fail('message_start must have empty content and no stop_reason', data);
        out.startUsage = data.message.usage;
        break;
      case 'content_block_start': {
        if (open !== undefined) fail(`block ${data.index} opened while block ${open} is open`, data);
        if (data.index !== out.blocks.length || out.usage) fail(`block index ${data.index} out of order`, data);
        const type = data.content_block.type;
        if (type === 'fallback') sawAnswer = false;
        else if (type === 'thinking' || type === 'redacted_thinking') {
          if (sawAnswer) fail('a thinking block after an answer block', data);
        } else sawAnswer = true;
        out.blocks.push({ ...data.content_block, ...(type === 'tool_use' ? { partial: '' } : {}) });
        open = data.index;
        break;
      }
      case 'content_block_delta':
        if (data.index !== open) fail(`a delta for block ${data.index}, which is not open`, data);
        applyDelta(out.blocks[data.index], data.delta);
        break;
      case 'content_block_stop':
        if (data.index !== open) fail(`content_block_stop for block ${data.index}, which is not open`, data);
        finishBlock(out.blocks[data.index]);
        open = undefined;
        break;
      case 'message_delta':
        if (open !== undefined || out.usage) fail('message_delta with a block open, or twice', data);
        out.stopReason = data.delta.stop_reason;
        out.usage = data.usage;
        break;
      case 'message_stop':
        if (!out.usage) fail('message_stop before message_delta', data);
        ended = true;
        break;
      case 'error':
        out.error = data.error;
        ended = true;
        break;
      default: // ping
    }
  }
  if (!ended) fail('the stream ended without message_stop or error', out.events.at(-1));
  return out;
}

function applyDelta(block: any, delta: any): void {
  if (!DELTA_FOR[block.type]?.includes(delta.type)) fail(`a ${delta.type} in a ${block.type} block`, delta);
  if (delta.type === 'text_delta') block.text += delta.text;
  else if (delta.type === 'thinking_delta') block.thinking += delta.thinking;
  else if (delta.type === 'signature_delta') block.signature += delta.signature;
  else if (delta.type === 'input_json_delta') block.partial += delta.partial_json;
}

function finishBlock(block: any): void {
  if (block.type !== 'tool_use') return;
  block.input = block.partial ? JSON.parse(block.partial) : block.input;
  delete block.partial;
}
