import type { ProviderConfig } from '../providers/types.js';

/**
 * Prices are integers in the ledger's unit, nanodollars (1e-9 USD), per token.
 * $3 per million tokens = 3000 per token. Reasoning tokens are billed as output.
 */
export interface Price {
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
}

export interface Capabilities {
  tools: boolean;
  reasoning: boolean;
  images: boolean;
}

export interface FastVariant {
  /** Another catalog model serves the fast variant ... */
  model?: string;
  /** ... or the same upstream model with provider options (OpenAI `service_tier`, Anthropic `speed`). */
  serviceTier?: string;
  speed?: string;
  /** Price of the fast variant when it is served by provider options (defaults to the model's). */
  price?: Price;
}

/**
 * One place a model is served: a provider (an account, a region, a cloud) and the name it knows
 * the model by. A model configured without `deployments:` has one, named "0".
 */
export interface Deployment {
  /** `<model id>/<name>`: unique in the catalog and stable across restarts (health is kept by it). */
  id: string;
  name: string;
  provider: ProviderConfig;
  upstreamModel: string;
  /** Share of the traffic under the weighted strategy (and of sessions under affinity), > 0. */
  weight: number;
  /** What a request served here is billed at: the deployment's own price, else the model's. */
  price: Price;
  /** The deployment's output maximum, else the model's. */
  maxOutputTokens?: number;
}

/**
 * How a request picks among a model's available deployments (`routing/pick-deployment.ts`):
 * at random by weight, the fewest calls running in this instance, or the lowest recent latency
 * to first output (an unmeasured deployment first, so each gets measured).
 */
export type RoutingStrategy = 'weighted' | 'least_in_flight' | 'lowest_latency';

export interface Routing {
  strategy: RoutingStrategy;
  /** Requests carrying a session identity stick to one deployment while it is available. */
  sessionAffinity: boolean;
  /** How long repeated failures cool a deployment down (ms); the health store's default (30 s) when absent. */
  cooldownMs?: number;
}

export interface ModelEntry {
  id: string;
  displayName: string;
  /** Where the model is served, at least one; routing picks among them per request. */
  deployments: Deployment[];
  routing: Routing;
  /** The model's list price (its configured price, else its first deployment's): the models list shows it. */
  price: Price;
  contextWindow: number;
  /**
   * The model's output maximum, when configured: a larger client ceiling is clamped to it.
   * Undefined: the gateway knows no maximum and sends the client's ceiling as asked (the
   * upstream refuses it if it must).
   */
  maxOutputTokens?: number;
  capabilities: Capabilities;
  fast?: FastVariant;
  /** The chain used by `fallbacks: "default"`. */
  fallbacks: string[];
  /** Also fall back on unavailability (5xx, 429 after retries, timeouts), not only refusals. */
  fallbackOnUnavailable: boolean;
  aliases: string[];
  /** Name patterns (`*` wildcards) this model serves; exact ids and aliases win over them. */
  patterns?: string[];
  /** Unix seconds, shown in the models list. */
  created: number;
  /** Local models: output tokens per second of a stream (0 = as fast as possible). */
  tokensPerSecond?: number;
  /** Local models: a non-streamed answer is paced too (tests of whole answers in flight); else it is generated at once. */
  paceWholeAnswers?: boolean;
  /** Hidden from the models list (e.g. a fast variant that only serves through its parent). */
  hidden?: boolean;
}

/** A model-name pattern (`claude-*haiku*`): any name it matches is served by `modelId`. */
export interface ModelPattern {
  glob: string;
  modelId: string;
  regex: RegExp;
}

export interface Catalog {
  providers: Map<string, ProviderConfig>;
  models: Map<string, ModelEntry>;
  /** Alias -> model id. */
  aliases: Map<string, string>;
  /** Tried in this order (most specific first), after ids and aliases. */
  patterns?: ModelPattern[];
}

/**
 * The model a client's name means: an exact id, else an alias, else the first pattern that
 * matches (the catalog keeps them most specific first). Agents send provider model ids (`claude-haiku-4-5-20251001`, `gpt-5-codex`) that an
 * operator maps with patterns instead of configuring every agent.
 */
export function findModel(catalog: Catalog, name: string): ModelEntry | undefined {
  const id = catalog.models.has(name) ? name : (catalog.aliases.get(name) ?? catalog.patterns?.find((p) => p.regex.test(name))?.modelId);
  return id === undefined ? undefined : catalog.models.get(id);
}

/** `*` matches any run of characters (also none); every other character stands for itself. */
export function globRegex(glob: string): RegExp {
  const body = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${body}$`, 's');
}
