import type { GatewayError, StreamEvent, StreamTranslator } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';

/** An upstream failure answer as the transport received it. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body was JSON, otherwise the raw text. */
  body: unknown;
  /** Wall clock, for `retry-after` HTTP dates (decoders read no clock). */
  nowMs: number;
}

/**
 * Everything the transport needs for one upstream call, prepared by a provider's pure
 * encode/decode files. The transport does the I/O, retries and SSE parsing.
 */
export interface UpstreamExchange<S> {
  url: string;
  headers: Record<string, string>;
  /** JSON body; serialised by the transport. */
  body: unknown;
  decodeError(answer: ErrorAnswer): GatewayError;
  /** Upstream SSE events -> IR events. May throw a GatewayError (in-stream error, bad JSON). */
  decodeStream: StreamTranslator<S, SseEvent, StreamEvent>;
  initStream(): S;
  /** A JSON answer (a non-streamed call, or an upstream that ignored `stream:true`) -> the same IR events. */
  decodeResponse(body: unknown): StreamEvent[];
}
