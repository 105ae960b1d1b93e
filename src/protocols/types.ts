import type { ClientProtocol, GatewayError, RateLimitStatus, Request, Response, StreamEvent, StreamTranslator } from '../ir/index.js';

/** One server-sent event. `data` is the payload text (JSON or `[DONE]`); the SSE writer frames it. */
export interface SseFrame {
  event?: string;
  data: string;
}

/**
 * How a protocol's stream travels when it is not SSE: the same events, framed otherwise (Bedrock's
 * binary event stream). A frame that comes out empty is not sent.
 */
export interface StreamFraming {
  contentType: string;
  frame(frame: SseFrame): Uint8Array;
}

/** Facts an encoder needs that it must not look up itself (style rule 2: no clock, no I/O). */
export interface EncodeMeta {
  requestId: string;
  /** Unix seconds. */
  created: number;
  /** The model id the client asked for. */
  requestedModel: string;
  /** Input tokens counted by the gateway, for protocols that report input up front (message_start). */
  inputTokensEstimate: number;
  /** Chat `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Which variant serves the first attempt (`fast` when the fast variant does). */
  servedVariant?: 'standard' | 'fast';
  /** The request as decoded (Responses echoes several request fields). */
  request: Request;
}

/** Incoming HTTP facts a decoder may read (lower-cased header names). */
export type HeaderBag = Record<string, string | undefined>;

export interface ErrorBody {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * A client protocol: decode a request into the IR, encode answers, streams and errors out of it.
 * One folder per protocol, with the files `decode-request`, `encode-response`, `encode-stream`,
 * `encode-error`, and an `index.ts` exporting one `ProtocolAdapter`.
 */
export interface ProtocolAdapter<S = unknown> {
  name: ClientProtocol;
  /** Throws GatewayError('invalid_request') for what schema validation cannot catch. */
  decodeRequest(body: Record<string, unknown>, headers: HeaderBag): Request;
  encodeResponse(res: Response, meta: EncodeMeta): unknown;
  /** A fresh encoder state for one stream. */
  initStream(meta: EncodeMeta): S;
  stream: StreamTranslator<S, StreamEvent, SseFrame>;
  /** The stream's framing, when it is not SSE (the one SSE writer frames it then). */
  framing?: StreamFraming;
  /** The error as an HTTP response (before the first byte). */
  encodeError(err: GatewayError, requestId: string): ErrorBody;
  /** The calling key's rate limits in this protocol's headers (`nowMs` for absolute reset times). */
  rateLimitHeaders(status: RateLimitStatus, nowMs: number): Record<string, string>;
  /** A header of its own that repeats the request id (besides `x-request-id`). */
  requestIdHeader?: string;
  /** Request headers that carry an API version date (`2023-06-01`), checked before authentication. */
  versionHeaders?: string[];
}
