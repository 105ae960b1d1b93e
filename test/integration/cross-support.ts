/**
 * Shared by the cross-protocol and upstream integration tests: post a request in any client
 * protocol to the gateway, split the SSE answer, and validate what came back against our spec
 * (generated/openapi.yaml) and the provider's official schema (shared/reference).
 */
import type { OpenAPIBackend } from 'openapi-backend';
import { compileComponent, loadApi, type SchemaCheck } from '../../spec/load-api.js';
import { validateOfficial, withoutSwitchyardExtensions, type Vendor } from '../support/official-schemas.js';

export type ClientProtocol = 'chat' | 'messages' | 'responses';
export const CLIENT_PROTOCOLS: ClientProtocol[] = ['chat', 'messages', 'responses'];

interface ProtocolFacts {
  path: string;
  operationId: string;
  /** Our component schema of one stream payload. */
  streamSchema: string;
  vendor: Vendor;
  officialStream: string;
  officialBody: string;
}

export const FACTS: Record<ClientProtocol, ProtocolFacts> = {
  chat: {
    path: '/v1/chat/completions',
    operationId: 'createChatCompletion',
    streamSchema: 'ChatCompletionChunk',
    vendor: 'openai',
    officialStream: 'CreateChatCompletionStreamResponse',
    officialBody: 'CreateChatCompletionResponse',
  },
  messages: {
    path: '/v1/messages',
    operationId: 'createMessage',
    streamSchema: 'MessageStreamEvent',
    vendor: 'anthropic',
    officialStream: 'MessageStreamEvent',
    officialBody: 'Message',
  },
  responses: {
    path: '/v1/responses',
    operationId: 'createResponse',
    streamSchema: 'ResponseStreamEvent',
    vendor: 'openai',
    officialStream: 'ResponseStreamEvent',
    officialBody: 'Response',
  },
};

/** A small conversation in each client protocol's own words: system prompt, one tool, a question. */
export function sampleBody(protocol: ClientProtocol, model: string, stream: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const question = 'What is the weather in Paris?';
  const schema = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] };
  if (protocol === 'chat') {
    return {
      model,
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      max_tokens: 16000,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: question }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: schema } }],
      ...extra,
    };
  }
  if (protocol === 'messages') {
    return {
      model,
      stream,
      max_tokens: 16000,
      system: 'Be brief.',
      messages: [{ role: 'user', content: question }],
      tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: schema }],
      ...extra,
    };
  }
  return {
    model,
    stream,
    max_output_tokens: 16000,
    instructions: 'Be brief.',
    input: question,
    tools: [{ type: 'function', name: 'get_weather', description: 'Weather by city', parameters: schema }],
    ...extra,
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** SSE frames (`data` parsed as JSON unless `[DONE]`) when the answer was a stream. */
  frames: Array<{ event?: string; data: any }>;
  /** The parsed body when the answer was JSON. */
  json?: any;
}

export async function post(baseUrl: string, key: string, protocol: ClientProtocol, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(baseUrl + FACTS[protocol].path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const isSse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  return {
    status: res.status,
    headers: res.headers,
    text,
    frames: isSse ? splitSse(text) : [],
    json: isSse ? undefined : JSON.parse(text),
  };
}

export function splitSse(text: string): Array<{ event?: string; data: any }> {
  return text
    .split(/\n\n+/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      const raw = data.join('\n');
      return { ...(event ? { event } : {}), data: raw === '[DONE]' ? raw : JSON.parse(raw) };
    });
}

let api: OpenAPIBackend | undefined;
const ours = new Map<string, SchemaCheck>();

export async function loadSpec(): Promise<void> {
  api ??= await loadApi();
}

function ourSchema(name: string): SchemaCheck {
  if (!api) throw new Error('call loadSpec() in beforeAll');
  let check = ours.get(name);
  if (!check) ours.set(name, (check = compileComponent(api, name)));
  return check;
}

/** Errors of every stream payload against our schema and the official one ([] = all valid). */
export function streamProblems(protocol: ClientProtocol, frames: Answer['frames']): string[] {
  const f = FACTS[protocol];
  const problems: string[] = [];
  frames.forEach((frame, i) => {
    if (frame.data === '[DONE]') return;
    // A chat in-stream error is `{error:{...}}`, not a chunk: validated as an error body.
    const isChatError = protocol === 'chat' && frame.data.error !== undefined;
    const mine = isChatError ? bodyProblemsOurs(protocol, 500, frame.data) : ourSchema(f.streamSchema)(frame.data);
    problems.push(...mine.map((e) => `#${i} ours: ${e}`));
    const official = withoutSwitchyardExtensions(frame.data);
    if (official === undefined) return;
    // Anthropic's official MessageStreamEvent has no `error` member although the API sends one
    // (reference README): its payload is the ErrorResponse shape.
    const isMessagesError = protocol === 'messages' && frame.data.type === 'error';
    const name = isChatError || isMessagesError ? 'ErrorResponse' : f.officialStream;
    problems.push(...validateOfficial(f.vendor, name, official).map((e) => `#${i} official ${name}: ${e}`));
  });
  return problems;
}

function bodyProblemsOurs(protocol: ClientProtocol, status: number, body: unknown): string[] {
  if (!api) throw new Error('call loadSpec() in beforeAll');
  const errors = api.validateResponse(body, FACTS[protocol].operationId, status).errors ?? [];
  return errors.map((e: any) => `${e.instancePath} ${e.message}`);
}

/** Errors of a JSON answer (success or error body) against our spec and the official schema. */
export function bodyProblems(protocol: ClientProtocol, status: number, body: unknown): string[] {
  const f = FACTS[protocol];
  const name = status >= 400 ? 'ErrorResponse' : f.officialBody;
  const official = validateOfficial(f.vendor, name, withoutSwitchyardExtensions(body)).map((e) => `official ${name}: ${e}`);
  return [...bodyProblemsOurs(protocol, status, body).map((e) => `ours: ${e}`), ...official];
}

/** Ids derived from the request id and timestamps differ per run: blank them for snapshots. */
export function normalise<T>(value: T): T {
  const text = JSON.stringify(value)
    .replace(/[0-9a-f]{32}/g, 'ID')
    .replace(/"(created|created_at|completed_at)":\d+/g, '"$1":0');
  return JSON.parse(text) as T;
}
