import type { GatewayError, UpstreamEvent, StreamTranslator } from '../../ir/index.js';
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
  /**
   * Per-request credentials, when static headers cannot carry them: called before every try
   * (retries included) with the exact bytes to be sent, it returns the headers to add (an AWS
   * SigV4 signature over the body, an OAuth token that may have been refreshed since).
   */
  sign?(request: { url: string; headers: Record<string, string>; body: string }): Promise<Record<string, string>>;
  /**
   * The streamed answer's framing, as events for `decodeStream`; SSE (`parseSse`) when absent.
   * An upstream with a binary framing (AWS event stream) turns its messages into `SseEvent`s.
   */
  readEvents?(body: AsyncIterable<Uint8Array>): AsyncIterable<SseEvent>;
  decodeError(answer: ErrorAnswer): GatewayError;
  /** Upstream SSE events -> IR events. May throw a GatewayError (in-stream error, bad JSON). */
  decodeStream: StreamTranslator<S, SseEvent, UpstreamEvent>;
  initStream(): S;
  /** A JSON answer (a non-streamed call, or an upstream that ignored `stream:true`) -> the same IR events. */
  decodeResponse(body: unknown): UpstreamEvent[];
}
