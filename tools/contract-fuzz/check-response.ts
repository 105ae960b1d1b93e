/**
 * Checks on every answer: no 5xx, a documented status (and the mutation's status when it is
 * certain), a body valid against the document, SSE only when asked for and then valid event by
 * event, errors in the operation's protocol shape, and (optionally) the providers' own schemas.
 */
import { wantsStream, type FuzzRequest } from './build-requests.js';
import { checkStream, type OfficialCheck, type StreamProtocol } from './check-stream.js';
import type { Contract, Operation } from './load-contract.js';
import type { FuzzResponse } from './send-request.js';

/** Official-schema check of a non-streamed body (`kind` says success or error). */
export type OfficialBodyCheck = (protocol: StreamProtocol, kind: 'body' | 'error', value: unknown) => string[];

export interface OfficialChecks {
  body: OfficialBodyCheck;
  event: OfficialCheck;
}

const STREAMING_OPS: Record<string, StreamProtocol> = {
  createChatCompletion: 'openai-chat',
  createMessage: 'anthropic-messages',
  createResponse: 'openai-responses',
  vertexRawPredict: 'anthropic-messages',
  vertexStreamRawPredict: 'anthropic-messages',
};

const streamAsked = (op: Operation, req: FuzzRequest) => op.onlyStreams || wantsStream(req);

type ErrorProtocol = 'openai' | 'anthropic' | 'bedrock' | 'either';

/** Whose error shape the operation's errors take (the models endpoints follow `anthropic-version`). */
export function errorProtocol(op: Operation, req: FuzzRequest): ErrorProtocol {
  if (op.path.startsWith('/v1/messages') || op.path.startsWith('/v1/projects/')) return 'anthropic';
  if (op.path.startsWith('/model/')) return 'bedrock';
  // With anthropic-version the handler's 404 is Anthropic-shaped, the app's 400/401 OpenAI-shaped (spec/models).
  return op.path.startsWith('/v1/models') && req.headers['anthropic-version'] !== undefined ? 'either' : 'openai';
}

export function checkResponse(contract: Contract, op: Operation, req: FuzzRequest, res: FuzzResponse, official?: OfficialChecks): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`server error ${res.status}: ${res.text.slice(0, 300)}`);
  if (!op.statuses.has(res.status)) problems.push(`status ${res.status} is not documented for ${op.operationId}`);
  if (req.expect && !req.expect.includes(res.status)) problems.push(`${req.kind} must answer ${req.expect.join(' or ')}, got ${res.status}: ${res.text.slice(0, 200)}`);
  problems.push(...checkHeaders(op, res));
  if (op.method === 'HEAD') return problems;
  const protocol = STREAMING_OPS[op.operationId];
  if (res.events) {
    if (res.status !== 200 || !protocol || !streamAsked(op, req)) problems.push(`unexpected event stream (status ${res.status}, stream asked: ${streamAsked(op, req)})`);
    if (protocol) problems.push(...checkStream(contract, protocol, res.events, official?.event));
    return problems;
  }
  if (res.status === 200 && protocol && streamAsked(op, req)) problems.push('stream: true but the answer is not text/event-stream');
  if (res.status === 200 && op.otherTypes.some((t) => sameMediaType(t, res.contentType))) {
    return res.text.length > 0 ? problems : [...problems, `empty ${res.contentType} body`];
  }
  if (!res.contentType.startsWith('application/json')) return [...problems, `content-type ${res.contentType || '(none)'} is not application/json`];
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    return [...problems, `body is not JSON: ${res.text.slice(0, 100)}`];
  }
  for (const err of contract.validateBody(op.operationId, res.status, body)) problems.push(`body vs document (${res.status}): ${err}`);
  if (res.status >= 400) problems.push(...checkErrorShape(errorProtocol(op, req), body));
  if (protocol && official) {
    for (const err of official.body(protocol, res.status >= 400 ? 'error' : 'body', body)) problems.push(`body vs official schema: ${err}`);
  }
  return problems;
}

/**
 * The gateway's own headers (ids, `x-switchyard-*`, rate limits, retry advice, `allow`) are sent
 * only where the document declares them for that status, and the required ones always are.
 */
const GATEWAY_HEADER = /^(x-request-id|request-id|x-switchyard-.*|x-ratelimit-.*|anthropic-ratelimit-.*|retry-after|x-should-retry|allow)$/;

export function checkHeaders(op: Operation, res: Pick<FuzzResponse, 'status' | 'headers'>): string[] {
  const documented = op.headers.get(res.status);
  if (!documented) return [];
  const problems: string[] = [];
  for (const name of Object.keys(res.headers)) {
    if (GATEWAY_HEADER.test(name) && !documented.has(name)) problems.push(`header ${name} is sent but not documented for ${res.status}`);
  }
  for (const [name, required] of documented) {
    if (required && !(name in res.headers)) problems.push(`required header ${name} is missing from ${res.status}`);
  }
  return problems;
}

/** OpenAI `{error:{message,type,param,code}}`; Anthropic `{type:"error",error:{type,message}}`; Bedrock `{message}`. */
export function checkErrorShape(protocol: ErrorProtocol, body: any): string[] {
  if (protocol === 'either') {
    const anthropic = checkErrorShape('anthropic', body);
    return anthropic.length && checkErrorShape('openai', body).length ? anthropic : [];
  }
  const e = body?.error;
  const str = (v: unknown) => typeof v === 'string' && v.length > 0;
  if (protocol === 'bedrock') return str(body?.message) && Object.keys(body).length === 1 ? [] : [`not a Bedrock error body: ${JSON.stringify(body).slice(0, 200)}`];
  if (protocol === 'anthropic') {
    if (body?.type !== 'error' || !str(e?.type) || !str(e?.message)) return [`not an Anthropic error body: ${JSON.stringify(body).slice(0, 200)}`];
    return [];
  }
  const ok = str(e?.message) && str(e?.type) && 'param' in (e ?? {}) && 'code' in (e ?? {});
  return ok ? [] : [`not an OpenAI error body: ${JSON.stringify(body).slice(0, 200)}`];
}

/** `text/plain; version=0.0.4; charset=utf-8` matches `text/plain; charset=utf-8; version=0.0.4`. */
function sameMediaType(documented: string, actual: string): boolean {
  return documented.split(';')[0].trim() === actual.split(';')[0].trim();
}
