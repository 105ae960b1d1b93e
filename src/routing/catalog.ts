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
  /** Unix seconds, shown in the models list. */
  created: number;
  /** Local models: output tokens per second (0 = as fast as possible). */
  tokensPerSecond?: number;
  /** Hidden from the models list (e.g. a fast variant that only serves through its parent). */
  hidden?: boolean;
}

export interface Catalog {
  providers: Map<string, ProviderConfig>;
  models: Map<string, ModelEntry>;
  /** Alias -> model id. */
  aliases: Map<string, string>;
}

export function findModel(catalog: Catalog, idOrAlias: string): ModelEntry | undefined {
  return catalog.models.get(idOrAlias) ?? catalog.models.get(catalog.aliases.get(idOrAlias) ?? '');
}
