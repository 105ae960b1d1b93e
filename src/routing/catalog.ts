import type { ProviderConfig } from '../providers/types.js';

/**
 * Rates are integers in femtodollars (1e-15 USD, a millionth of the ledger's nanodollar) per
 * token: $3 per million tokens = 3_000_000_000 per token, and a price sheet's $0.0375 per million
 * is exact (37_500_000). A request's cost is summed exactly in this unit and rounded up to whole
 * nanodollars once (ledger/price.ts).
 */
export const RATE_UNITS_PER_NANODOLLAR = 1_000_000n;

/** What each kind of token costs, per token. */
export interface TokenRates {
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  /** A cache write that lives 5 minutes (the default lifetime). */
  cacheWrite: bigint;
  /** A cache write that lives one hour (Anthropic: twice the input price). */
  cacheWrite1h: bigint;
  /** Reasoning tokens, where priced apart from output (else they are output). */
  reasoning?: bigint;
  /** Audio and image tokens, where priced apart from text (else they are text). */
  inputAudio?: bigint;
  inputImage?: bigint;
  outputAudio?: bigint;
  outputImage?: bigint;
}

/** Rates for prompts longer than `above` tokens: the whole request is billed at them. */
export interface LongContextTier {
  above: number;
  rates: TokenRates;
}

/** A price without service tiers: what one service tier charges. */
export interface TierPrice extends TokenRates {
  /** Long-context tiers, ascending by `above`; the highest one the prompt is above applies. */
  tiers?: LongContextTier[];
  /** Fees per use of a server tool (femtodollars per use), by tool (`web_search`, ...). */
  perUse?: Record<string, bigint>;
}

/**
 * What a deployment bills: its rates, long-context tiers and per-use fees, and the service tiers
 * priced apart (OpenAI `flex` and `priority`), by the name the provider's answer gives the tier.
 */
export interface Price extends TierPrice {
  serviceTiers?: Record<string, TierPrice>;
}

export interface Capabilities {
  tools: boolean;
  reasoning: boolean;
  images: boolean;
}

export interface FastVariant {
  /** Another catalog model serves the fast variant ... */
  model?: string;
  /** ... or the same upstream model with settings its provider kind reads (its `fastFields`, as configured). */
  options?: Readonly<Record<string, unknown>>;
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
  /** Where the price came from: `config`, `price table <version> (<provider>/<model>)`, `built-in local model`, `free`. */
  priceSource?: string;
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
  /** Its settings for the provider kinds serving it (their `modelFields`, as configured): each target carries them. */
  modelOptions?: Readonly<Record<string, unknown>>;
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
