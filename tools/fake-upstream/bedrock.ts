import { readFileSync } from 'node:fs';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * Amazon Bedrock Runtime's wire format for the fake upstream: `POST /model/{modelId}/{action}`,
 * answers streamed as AWS event-stream frames (`application/vnd.amazon.eventstream`, CRCs by the
 * AWS codec), errors as `{"message"}` with the type in `x-amzn-errortype`, and SigV4 checks.
 */

export const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

export interface BedrockCall {
  model: string;
  api: 'invoke' | 'converse';
  stream: boolean;
}

/** `/model/{modelId}/invoke`, `/invoke-with-response-stream`, `/converse`, `/converse-stream`. */
export function bedrockCall(pathname: string): BedrockCall | undefined {
  const m = /\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/.exec(pathname);
  if (!m) return undefined;
  return { model: decodeURIComponent(m[1]), api: m[2].startsWith('invoke') ? 'invoke' : 'converse', stream: m[2].endsWith('stream') };
}

/** Bedrock's error type for a status, as `x-amzn-errortype` names it. */
const TYPE_OF_STATUS: Record<number, string> = {
  400: 'ValidationException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException', 408: 'ModelTimeoutException',
  424: 'ModelErrorException', 429: 'ThrottlingException', 500: 'InternalServerException', 503: 'ServiceUnavailableException',
};

export function bedrockErrorType(status: number): string {
  return TYPE_OF_STATUS[status] ?? 'InternalServerException';
}

/** The header Bedrock puts the error type in, with the suffix the service adds. */
export function bedrockErrorHeaders(type: string): Record<string, string> {
  return { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });

/** One event frame: `:event-type`, JSON content, `:message-type: event`. */
export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  const headers: MessageHeaders = { ':event-type': str(eventType), ':content-type': str('application/json'), ':message-type': str('event') };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) });
}

/** An exception frame (`:message-type: exception`), as Bedrock sends a failure after the 200. */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  const headers: MessageHeaders = { ':exception-type': str(exceptionType), ':content-type': str('application/json'), ':message-type': str('exception') };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify({ message })) });
}

/** An InvokeModel `chunk`: one Anthropic stream event, base64 in `bytes`. */
export function chunkFrame(anthropicEvent: unknown): Uint8Array {
  return eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(anthropicEvent)).toString('base64') });
}

/** A frame whose message CRC is wrong, for the `malformed` fault. */
export function corruptFrame(): Uint8Array {
  const frame = chunkFrame({ type: 'ping' });
  frame[frame.length - 1] ^= 0xff;
  return frame;
}

/** Anthropic SSE event texts (the fake's generated answers) -> InvokeModel chunk frames. */
export function sseToChunks(events: string[]): Uint8Array[] {
  return events.flatMap((e) => {
    const data = e.split('\n').find((l) => l.startsWith('data:'));
    return data ? [chunkFrame(JSON.parse(data.slice(5)))] : [];
  });
}

/**
 * A project script (`scripts/bedrock/*.jsonl`) as frames: a line with a `type` is an Anthropic
 * stream event sent as an InvokeModel `chunk`; `{"exception": {"type", "message"}}` is an
 * exception frame; any other `{"<event-type>": payload}` is that event (Converse's events).
 */
export function scriptFrames(text: string): Uint8Array[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const v = JSON.parse(line) as Record<string, unknown>;
      if (typeof v.type === 'string') return chunkFrame(v);
      const [key, payload] = Object.entries(v)[0];
      if (key === 'exception') {
        const e = payload as { type: string; message: string };
        return exceptionFrame(e.type, e.message);
      }
      return eventFrame(key, payload);
    });
}

/** A recorded `.eventstream` body, split into its frames (each frame's bytes as recorded). */
export function recordedFrames(file: string): Uint8Array[] {
  const bytes = readFileSync(file);
  const frames: Uint8Array[] = [];
  for (let at = 0; at + 4 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    frames.push(new Uint8Array(bytes.subarray(at, at + length)));
    at += length;
  }
  return frames;
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([a-z0-9-]+)\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/**
 * What is wrong with a request's credentials, in Bedrock's words (undefined: nothing): a Bearer
 * API key, or a well-formed SigV4 `Authorization` for service `bedrock` with its `x-amz-date`.
 * With `credentials`, the signature is computed again over the received request and must match.
 */
export async function checkBedrockAuth(
  req: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: Buffer },
  credentials?: AwsCredentials,
): Promise<{ status: number; type: string; message: string } | undefined> {
  const auth = typeof req.headers.authorization === 'string' ? req.headers.authorization : '';
  if (auth.startsWith('Bearer ') && auth.length > 'Bearer '.length) return undefined;
  const m = AUTH.exec(auth);
  const date = typeof req.headers['x-amz-date'] === 'string' ? req.headers['x-amz-date'] : '';
  if (!m || !/^\d{8}T\d{6}Z$/.test(date) || !date.startsWith(m[2])) {
    return { status: 403, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  }
  const signed = m[4].split(';');
  if (!signed.includes('host') || !signed.includes('x-amz-date')) {
    return { status: 403, type: 'IncompleteSignatureException', message: `SignedHeaders must include host and x-amz-date: ${m[4]}` };
  }
  if (!credentials) return undefined;
  if (m[1] !== credentials.accessKeyId) return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  const u = new URL(req.url, `http://${String(req.headers.host)}`);
  const headers: Record<string, string> = {};
  for (const name of signed) headers[name] = String(req.headers[name] ?? '');
  const signer = new SignatureV4({ service: 'bedrock', region: m[3], credentials, sha256: Sha256 });
  const again = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: u.hostname, path: u.pathname, query: {}, headers, body: new Uint8Array(req.body) },
    { signingDate: new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 11)}:${date.slice(11, 13)}:${date.slice(13)}`) },
  );
  if (again.headers.authorization !== auth) {
    return { status: 403, type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.' };
  }
  return undefined;
}

/**
 * Anthropic SSE event texts (the fake's generated answers) -> ConverseStream frames: no
 * `contentBlockStart` for text, tool input as string fragments, `messageStop`, then `metadata`.
 */
export function sseToConverse(events: string[]): Uint8Array[] {
  const frames: Uint8Array[] = [];
  let usage = { inputTokens: 0, outputTokens: 0 };
  for (const e of events) {
    const line = e.split('\n').find((l) => l.startsWith('data:'));
    if (!line) continue;
    const ev = JSON.parse(line.slice(5)) as Record<string, any>;
    if (ev.type === 'message_start') {
      usage = { inputTokens: ev.message.usage?.input_tokens ?? 0, outputTokens: 0 };
      frames.push(eventFrame('messageStart', { role: 'assistant' }));
    } else if (ev.type === 'content_block_start' && ev.content_block.type === 'tool_use') {
      frames.push(eventFrame('contentBlockStart', { contentBlockIndex: ev.index, start: { toolUse: { toolUseId: ev.content_block.id, name: ev.content_block.name } } }));
    } else if (ev.type === 'content_block_delta') {
      const d = ev.delta;
      const delta = d.type === 'text_delta' ? { text: d.text } : d.type === 'input_json_delta' ? { toolUse: { input: d.partial_json } } : d.type === 'thinking_delta' ? { reasoningContent: { text: d.thinking } } : { reasoningContent: { signature: d.signature } };
      frames.push(eventFrame('contentBlockDelta', { contentBlockIndex: ev.index, delta }));
    } else if (ev.type === 'content_block_stop') {
      frames.push(eventFrame('contentBlockStop', { contentBlockIndex: ev.index }));
    } else if (ev.type === 'message_delta') {
      usage.outputTokens = ev.usage?.output_tokens ?? 0;
      frames.push(eventFrame('messageStop', { stopReason: ev.delta.stop_reason }));
    }
  }
  frames.push(eventFrame('metadata', { usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens }, metrics: { latencyMs: 1 } }));
  return frames;
}

/** An Anthropic message (the fake's generated answer) -> a Converse answer. */
export function messageToConverse(message: Record<string, any>): Record<string, unknown> {
  const content = (message.content as Array<Record<string, any>>).map((b) =>
    b.type === 'tool_use' ? { toolUse: { toolUseId: b.id, name: b.name, input: b.input } } : b.type === 'thinking' ? { reasoningContent: { reasoningText: { text: b.thinking, signature: b.signature } } } : { text: b.text },
  );
  const u = message.usage ?? {};
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: message.stop_reason,
    usage: { inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0, totalTokens: (u.input_tokens ?? 0) + (u.output_tokens ?? 0) },
    metrics: { latencyMs: 1 },
  };
}
