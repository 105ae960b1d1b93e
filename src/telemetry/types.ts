/**
 * What the gateway tells its operator's telemetry (OpenTelemetry, `telemetry/otel/`): one trace
 * per request, a span per attempt and per upstream call, the hold and the settle; the GenAI
 * metrics; the request log line and each settled request's usage as log records. Absent (undefined
 * wherever it is passed) when no OTEL_* variable asks for it: the seams then cost one property
 * check and the SDK is never loaded.
 */

/** Attribute values as OpenTelemetry takes them; undefined values are left out. */
import type { Scrubber } from '../util/redact.js';

export type AttributeValue = string | number | boolean | string[] | undefined;
export type Attributes = Record<string, AttributeValue>;

/** What the gateway hands its telemetry when it starts it. */
export interface TelemetryOptions {
  /** The gateway's credential scrubber (util/redact.ts), which every attribute goes through. */
  scrubber: Scrubber;
}

export interface Telemetry {
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: message content on the attempt spans. */
  readonly captureContent: boolean;
  /** The server span of a request, continuing the caller's `traceparent` when it sent one. */
  request(method: string, headers: Record<string, string | string[] | undefined>): RequestTrace;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** A span of the gateway's own. Attribute values naming a credential are never recorded. */
export interface SpanScope {
  set(attrs: Attributes): void;
  /** Ends the span as failed: `error.type` and the span status (the message is cleared of credentials). */
  fail(errorType: string, message?: string): void;
  end(): void;
}

export interface RequestTrace extends SpanScope {
  /** Message content goes on the attempt spans (the operator opted in). */
  readonly captureContent: boolean;
  readonly traceId: string;
  readonly spanId: string;
  /** The span name once the route is known (`POST /v1/messages`). */
  route(route: string): void;
  /** A child of the request's span (the hold, the settle). */
  child(name: string, attrs?: Attributes): SpanScope;
  /** An attempt: one candidate on one deployment (a GenAI client span). */
  attempt(facts: AttemptStart): AttemptTrace;
  /** The first output went to the client (gen_ai.server.time_to_first_token). */
  firstToken(): void;
  /** Ends the request's span with its HTTP status and records the server metrics. */
  finish(status: number, facts: RequestEnd): void;
  /** The request log line, as a log record in this trace (when log export is on). */
  log(line: Record<string, unknown>): void;
  /** A settled request's usage record, as a log record for the operator's pipeline. */
  usage(record: UsageExport): void;
}

export interface AttemptStart {
  /** The model as the catalog names it, and as the upstream does. */
  model: string;
  upstreamModel: string;
  deployment: string;
  /** The GenAI conventions' provider name (`openai`, `anthropic`, `aws.bedrock`, ...). */
  provider: string;
  index: number;
  stream: boolean;
  request: Attributes;
  /** gen_ai.input.messages and gen_ai.system_instructions, when content capture is on. */
  content?: { input: unknown; system?: unknown };
}

export interface AttemptTrace {
  /** The first chunk came from the upstream (gen_ai.response.time_to_first_chunk). */
  firstChunk(): void;
  /** An HTTP try of the upstream call: a client span whose `traceparent` goes out with it. */
  upstream(info: { method: string; url: string; resend: number }): UpstreamTry;
  end(facts: AttemptEnd): void;
}

export interface UpstreamTry {
  /** Headers to send with the call (`traceparent`, `tracestate`). */
  readonly headers: Record<string, string>;
  response(status: number): void;
  end(error?: { type: string; message: string }): void;
}

export interface TokenCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

export interface AttemptEnd {
  /** ok, refusal, error or cancelled. */
  outcome: string;
  errorType?: string;
  errorMessage?: string;
  finishReasons?: string[];
  responseId?: string;
  usage?: TokenCounts;
  /** gen_ai.output.messages, when content capture is on. */
  output?: unknown;
}

export interface RequestEnd {
  operation?: string;
  requestModel?: string;
  responseModel?: string;
  provider?: string;
  errorType?: string;
  /** Output tokens of the answer (gen_ai.server.time_per_output_token). */
  outputTokens?: number;
}

/** One settled request, as the usage export delivers it. */
export interface UsageExport {
  requestId: string;
  accountId: string;
  /** The key the request came with, or the identity provider's user it came as. */
  keyId: string | null;
  userId: string | null;
  endUser: string | null;
  session: string | null;
  modelRequested: string;
  modelServed: string | null;
  deployments: string[];
  status: string;
  /** ok, or how the run fell back (`fallback`: another model answered). */
  fallback: boolean;
  attempts: number;
  usage: TokenCounts;
  /** Nanodollars. */
  cost: string;
  latencyMs: number;
}
