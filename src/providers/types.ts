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
   * The provider kind's own settings (`options:` in the config: a Bedrock region, a Vertex project,
   * and the entry fields it declares: an OpenAI-compatible upstream's `max_tokens_field`),
   * validated against its `Provider.options` when the config is loaded, then built by
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
  /**
   * The model's settings for its provider kind, as the config wrote them: the model entry's fields
   * the kind declares (`Provider.options.modelFields`), with the fast variant's (`fastFields`) over
   * them when the fast variant is served by the same upstream model. Only the provider reads them.
   */
  modelOptions?: Readonly<Record<string, unknown>>;
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
  /**
   * What this upstream can do for one target (its provider settings and model: Bedrock's Converse
   * API carries less than InvokeModel, and other fields for a model that is not Claude). The
   * pipeline asks once per candidate, through `capabilitiesOf` (providers/capabilities.ts).
   */
  capabilities(target: Target): ProviderCapabilities;
  /** Settings of this kind only (`options:` on a provider in the config, and fields it names); none when absent. */
  options?: ProviderOptionsSpec;
  /**
   * Models this kind serves with no config at all (the built-in local models): the catalog used
   * when no config file is given, and the price of a configured model on this kind that names one
   * of them as its upstream model and gives none.
   */
  builtIn?: BuiltInCatalog;
  stream(call: ProviderCall): AsyncIterable<UpstreamEvent>;
}

/** A kind's own catalog: its provider entry and its models (config/default-catalog.ts makes them a catalog). */
export interface BuiltInCatalog {
  provider: Omit<ProviderConfig, 'type'>;
  models: BuiltInModel[];
}

/** Per-token rates in femtodollars, as `routing/catalog.ts` prices them. */
export interface BuiltInRates {
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
  cacheWrite1h: bigint;
}

/** One built-in model, in the catalog's words (`routing/catalog.ts` ModelEntry) less its deployments and routing. */
export interface BuiltInModel {
  id: string;
  displayName: string;
  upstreamModel: string;
  price: BuiltInRates;
  contextWindow: number;
  maxOutputTokens: number;
  capabilities: { tools: boolean; reasoning: boolean; images: boolean };
  fast?: { model: string };
  fallbacks: string[];
  aliases: string[];
  /** Unix seconds, shown in the models list. */
  created: number;
  /** Its settings for this kind, as a config would write them (`Target.modelOptions`). */
  modelOptions?: Readonly<Record<string, unknown>>;
}

/**
 * A provider kind's own config settings. `schema` is the JSON schema of the `options:` object
 * (checked with the rest of the config, so a mistake is reported with the entry's name); `build`
 * turns the validated object into what `ProviderConfig.options` holds (defaults filled in,
 * environment read), throwing an Error whose message names the problem.
 */
export interface ProviderOptionsSpec {
  /** The `options:` object's schema; absent: the kind has no `options:` object (only the fields below). */
  schema?: Record<string, unknown>;
  /**
   * Fields of a provider entry of this kind written beside `options:` (an OpenAI-compatible
   * upstream's `max_tokens_field`), by name, with their schemas: the config loader moves them into
   * `options` before `build`. Another kind's entry may carry them too; it ignores them.
   */
  fields?: Record<string, Record<string, unknown>>;
  /**
   * Fields of a model entry this kind reads (the local models' `tokens_per_second`), by name, with
   * their schemas: the target of a deployment on this kind carries them in `modelOptions`.
   */
  modelFields?: Record<string, Record<string, unknown>>;
  /**
   * Fields of a model's `fast:` that make the fast variant a setting of the same upstream model
   * (OpenAI's `service_tier`, Anthropic's `speed`): carried in `modelOptions` when fast is asked.
   */
  fastFields?: Record<string, Record<string, unknown>>;
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
  /** Structured output with a schema (`json_schema`); absent: it has it. Without it the format is dropped with a warning. */
  jsonSchema?: boolean;
  /**
   * A `none` tool choice it can enforce while tools are declared; absent: it can. Without it, `none`
   * is met by declaring no tools, which a history holding tool calls rules out (Bedrock Converse):
   * then a warning says the model may call one.
   */
  toolChoiceNone?: boolean;
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
