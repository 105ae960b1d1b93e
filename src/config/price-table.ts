/**
 * Prices for configured models that do not state one, from the price table Pydantic maintains
 * and publishes on npm (@pydantic/genai-prices, bundled data: no network at run time). A model is
 * looked up by its upstream model name at its provider's base URL, so a price is found only for the
 * provider the table prices (OpenAI, Anthropic, OpenRouter, DeepSeek, ...); a model behind a local
 * or unknown URL (vLLM, Ollama, a proxy) has no known price and must be priced or marked free.
 */
import { createRequire } from 'node:module';
import type { Price } from '../routing/catalog.js';

type GenaiPrices = typeof import('@pydantic/genai-prices');

let table: GenaiPrices | undefined;

/**
 * Loaded on first use, synchronously (the catalog is built synchronously): the table is about
 * 2 MB of JavaScript, half a second of start-up that a fully priced catalog never pays.
 */
function priceTable(): GenaiPrices {
  table ??= createRequire(import.meta.url)('@pydantic/genai-prices') as GenaiPrices;
  return table;
}

export interface TablePrice {
  price: Price;
  contextWindow?: number;
  /** The table's provider and model ids, for messages and logs. */
  source: string;
}

/** The table's price of `upstreamModel` at the provider serving `baseUrl`, today; undefined when it has none. */
export function tablePrice(baseUrl: string, upstreamModel: string): TablePrice | undefined {
  const found = priceTable().calcPrice({ input_tokens: 1, output_tokens: 1 }, upstreamModel, { providerApiUrl: baseUrl });
  if (!found) return undefined;
  const p = found.model_price;
  const input = nanosPerToken(p.input_mtok);
  const output = nanosPerToken(p.output_mtok);
  if (input === undefined || output === undefined) return undefined;
  return {
    price: { input, output, cacheRead: nanosPerToken(p.cache_read_mtok) ?? input, cacheWrite: nanosPerToken(p.cache_write_mtok) ?? input },
    ...(found.model.context_window ? { contextWindow: found.model.context_window } : {}),
    source: `${found.provider.id}/${found.model.id}`,
  };
}

/**
 * USD per million tokens (a float in the table) as whole nanodollars per token, rounded up: the
 * ledger's unit is 0.001 USD per million, and a price of 0.0375 is billed 0.038 rather than under.
 * A tiered price (more per token above some prompt length) is billed at its base tier.
 */
function nanosPerToken(v: unknown): bigint | undefined {
  const usdPerMillion = typeof v === 'number' ? v : typeof v === 'object' && v !== null && 'base' in v ? (v as { base: unknown }).base : undefined;
  if (typeof usdPerMillion !== 'number' || !Number.isFinite(usdPerMillion) || usdPerMillion < 0) return undefined;
  // Through thousandths of a nanodollar first, so 0.4 x 1000 = 400.00000000000006 stays 400.
  return BigInt(Math.ceil(Math.round(usdPerMillion * 1e6) / 1e3));
}
