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

export interface ModelEntry {
  id: string;
  displayName: string;
  provider: string;
  upstreamModel: string;
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
  /** Local models: output tokens per second (0 = as fast as possible). */
  tokensPerSecond?: number;
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
