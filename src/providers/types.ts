import type { ExtKey, Request, UpstreamEvent } from '../ir/index.js';

export interface Timeouts {
  /** TCP/TLS connect. */
  connectMs: number;
  /** From request sent to response headers / first byte. */
  firstByteMs: number;
  /** Longest silence between two chunks of a stream. */
  idleMs: number;
  /** A non-streamed call: from request sent until the answer's headers (it is generated whole). */
  responseMs: number;
}

/** A provider as configured in the catalog (transport facts only). */
export interface ProviderConfig {
  id: string;
  /** The provider's registry key (`Provider.type`). */
  type: string;
  baseUrl: string;
  /** The resolved key (read from `api_key_env` at start-up); undefined for keyless upstreams. */
  apiKey?: string;
  headers: Record<string, string>;
  timeouts: Timeouts;
  /** Retries on 429 / 5xx / connection errors while nothing has reached the client. */
  maxRetries: number;
  /**
   * OpenAI-compatible upstreams: the field that carries the output ceiling. `max_tokens` (default)
   * is what DeepSeek, vLLM and Ollama know; OpenAI's reasoning models (o-series, gpt-5) accept
   * only `max_completion_tokens`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /**
   * The provider kind's own settings (`options:` in the config: a Bedrock region, a Vertex project),
   * validated against its `Provider.options.schema` when the config is loaded, then built by
   * `Provider.options.build`. Absent or empty for kinds that declare none.
   */
  options?: Readonly<Record<string, unknown>>;
}

/** What routing decided for one attempt. */
export interface Target {
  provider: ProviderConfig;
  /** Catalog id of the model this attempt runs. */
  modelId: string;
  /** The name the upstream knows the model by. */
  upstreamModel: string;
  /** Provider options for a fast variant served by the same upstream model. */
  fastOptions?: { serviceTier?: string; speed?: string };
  /** Local models only: output tokens per second of a client's stream. */
  tokensPerSecond?: number;
  /** Local models only: a non-streamed answer is paced too. */
  paceWholeAnswers?: boolean;
  /**
   * Retries of this call in place of the provider's `maxRetries`: 0 when routing has another
   * deployment to move to (spec/DECISIONS.md, "Deployments and routing").
   */
  maxRetries?: number;
}

export interface ProviderCall {
  /** The request with reasoning and the ceiling already resolved for this target. */
  request: Request;
  target: Target;
  requestId: string;
  /** Aborted when the client disconnects or the gateway stops the attempt. */
  signal: AbortSignal;
  /**
   * Whether the client reads a stream: `request.stream` is the upstream call's, which a long ceiling
   * streams for a client that did not ask (DECISIONS, "Upstream calls stream exactly when the client
   * streams"). The local models pace only a client's stream. Absent: as `request.stream`.
   */
  clientStreams?: boolean;
  /** Watches each HTTP try of the call (telemetry's client span; absent when telemetry is off). */
  observe?: CallObserver;
}

/** Told of each HTTP try of an upstream call: it answers the headers to add (a `traceparent`). */
export interface CallObserver {
  upstream(info: { method: string; url: string; resend: number }): {
    readonly headers: Record<string, string>;
    response(status: number): void;
    end(error?: { type: string; message: string }): void;
  };
}

/**
 * A provider produces a well-formed IR stream (`start`, blocks, `finish`) for a call. It throws a
 * GatewayError (with `retryable` set as appropriate) when the upstream fails, before or during
 * the stream. One folder per provider with `api`, `encode-request`, `decode-response`,
 * `decode-stream`, `decode-error`, and an `index.ts` exporting one `Provider`.
 */
export interface Provider {
  /** Its registry key: the `type` of a provider in the config. */
  type: string;
  /** Its `gen_ai.provider.name` in the OpenTelemetry GenAI conventions (`openai`, `aws.bedrock`, ...); its `type` when absent. */
  genAiName?: string;
  /** The upstream's URL when the config gives no `base_url`. */
  defaultBaseUrl: string;
  capabilities: ProviderCapabilities;
  /** Settings of this kind only (`options:` on a provider in the config); none when absent. */
  options?: ProviderOptionsSpec;
  stream(call: ProviderCall): AsyncIterable<UpstreamEvent>;
}

/**
 * A provider kind's own config settings. `schema` is the JSON schema of the `options:` object
 * (checked with the rest of the config, so a mistake is reported with the entry's name); `build`
 * turns the validated object into what `ProviderConfig.options` holds (defaults filled in,
 * environment read), throwing an Error whose message names the problem.
 */
export interface ProviderOptionsSpec {
  schema: Record<string, unknown>;
  build?(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown>;
}

/**
 * What an upstream kind can do, read by the pipeline (reasoning, warnings) and the encoders (via
 * reasoning origins), so that no module outside `providers/` and `config/` names a provider.
 */
export interface ProviderCapabilities {
  thinking: {
    /** The smallest thinking budget the upstream accepts (0: any); the ceiling must leave room for it. */
    minBudget: number;
    /** Forcing a tool (`tool_choice` required or a named tool) rules thinking out: the tool choice wins. */
    forcedToolBlocksThinking: boolean;
  };
  /** JSON mode without a schema (`json_object`); without it the format is dropped with a warning. */
  jsonMode: boolean;
  /**
   * The client protocol this upstream speaks natively: that protocol's extension bag (unknown
   * fields, pass-through headers) reaches it unchanged; other protocols' bags are named in a warning.
   */
  nativeProtocol?: ExtKey;
  /**
   * It runs its native protocol's server-side tools (Anthropic server tools, Responses hosted
   * tools and their items); elsewhere they are dropped with a warning.
   */
  serverTools: boolean;
  /**
   * Reasoning signatures: the family stamped on the origins of reasoning it produces (and the only
   * one it sends back upstream); `opaque` ones reach clients only sealed (shared/reasoning-envelope.ts).
   */
  signatures: { family: string; opaque: boolean };
  /**
   * How much more the upstream's own tokenizer may count for a prompt than the gateway's
   * (o200k_base): 0.35 holds a prompt at 1.35 times the gateway's count. Absent: no margin.
   */
  tokenizerMargin?: number;
}

/** Registry key -> Provider. */
export type ProviderRegistry = Readonly<Record<string, Provider>>;
