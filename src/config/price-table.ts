/**
 * Prices for configured models that do not state one, from the price table Pydantic maintains
 * and publishes on npm (@pydantic/genai-prices, bundled data: no network at run time). A model is
 * looked up by its upstream model name at its provider's base URL, so a price is found only for the
 * provider the table prices (OpenAI, Anthropic, OpenRouter, DeepSeek, ...); a model behind a local
 * or unknown URL (vLLM, Ollama, a proxy) has no known price and must be priced or marked free.
 * Every rate the table gives is taken exactly (to 1e-9 USD per million tokens), its long-context
 * tiers included; what it leaves out is completed by the documented multipliers (price-rules.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Price, TokenRates } from '../routing/catalog.js';
import { buildPrice, type StatedPrice, type StatedRates } from './build-price.js';
import { documentedRules } from './price-rules.js';

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

/** The table's version (its npm package's), named wherever a price comes from it. */
export function priceTableVersion(): string {
  // The package exports no ./package.json: read it beside its entry point (dist/..).
  version ??= (JSON.parse(readFileSync(join(dirname(createRequire(import.meta.url).resolve('@pydantic/genai-prices')), '..', 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
let version: string | undefined;

export interface TablePrice {
  price: Price;
  /** The table's rates as it states them, before the documented multipliers complete them. */
  stated: StatedPrice;
  contextWindow?: number;
  /** The table's provider and model ids, for messages and logs. */
  source: string;
}

/** The table's keys (USD per million tokens) and the rates they set. */
const TABLE_RATES: Record<string, keyof TokenRates> = {
  input_mtok: 'input',
  output_mtok: 'output',
  cache_read_mtok: 'cacheRead',
  cache_write_mtok: 'cacheWrite',
  cache_write_1h_mtok: 'cacheWrite1h',
  output_reasoning_mtok: 'reasoning',
  input_audio_mtok: 'inputAudio',
  input_image_mtok: 'inputImage',
  output_audio_mtok: 'outputAudio',
  output_image_mtok: 'outputImage',
};

/** The table's per-use fees (USD per thousand uses) and the server tools they price. */
const TABLE_FEES: Record<string, string> = { web_searches_kcount: 'web_search' };

/**
 * The table's price of `upstreamModel` at the provider serving `baseUrl`, today; undefined when it
 * has none. `kind` (the provider's registry type) picks the documented rules that complete it.
 */
export function tablePrice(baseUrl: string, upstreamModel: string, kind = ''): TablePrice | undefined {
  const found = priceTable().calcPrice({ input_tokens: 1, output_tokens: 1 }, upstreamModel, { providerApiUrl: baseUrl });
  if (!found) return undefined;
  const stated = statedFromTable(found.model_price);
  if (stated?.input === undefined || stated.output === undefined) return undefined;
  return {
    price: buildPrice(stated, documentedRules(kind, baseUrl, upstreamModel)),
    stated,
    ...(found.model.context_window ? { contextWindow: found.model.context_window } : {}),
    source: `${found.provider.id}/${found.model.id}`,
  };
}

type TableValue = number | { base: number; tiers: Array<{ start: number; price: number }> } | undefined;

/**
 * The table's model price as stated rates. A tiered value applies its tier's price to the whole
 * request when the prompt is above `start` (as the table computes it), so each distinct `start`
 * becomes a long-context tier with every tiered key's price there.
 */
function statedFromTable(p: Record<string, unknown>): StatedPrice | undefined {
  const base: StatedRates = {};
  const starts = new Set<number>();
  for (const [key, field] of Object.entries(TABLE_RATES)) {
    const v = p[key] as TableValue;
    if (v === undefined) continue;
    const rate = rateOf(typeof v === 'number' ? v : v.base);
    if (rate === undefined) return undefined;
    base[field] = rate;
    if (typeof v === 'object') for (const t of v.tiers) starts.add(t.start);
  }
  const out: StatedPrice = { ...base };
  if (starts.size) {
    out.tiers = [...starts].sort((a, b) => a - b).map((above) => {
      const rates: StatedRates & { above: number } = { above };
      for (const [key, field] of Object.entries(TABLE_RATES)) {
        const v = p[key] as TableValue;
        if (typeof v !== 'object') continue;
        const tier = v.tiers.filter((t) => t.start <= above).at(-1);
        rates[field] = rateOf(tier ? tier.price : v.base);
      }
      return rates;
    });
  }
  for (const [key, tool] of Object.entries(TABLE_FEES)) {
    const fee = typeof p[key] === 'number' ? rateOf(p[key] as number, 12) : undefined;
    if (fee !== undefined) (out.perUse ??= {})[tool] = fee;
  }
  return out;
}

/**
 * A price in USD per million tokens (a float in the table) as femtodollars per token: exact from
 * its shortest decimal text (0.0375 -> 37_500_000), rounded up past 9 decimals (never under).
 * Fees (USD per thousand uses) take 12 decimals (femtodollars per use).
 */
function rateOf(usd: unknown, digits = 9): bigint | undefined {
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) return undefined;
  const text = usd.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
  const shortest = String(usd);
  const [whole, frac = ''] = (/e/i.test(shortest) ? text : shortest).split('.');
  const scale = 10n ** BigInt(digits);
  if (frac.length <= digits) return BigInt(whole) * scale + BigInt(frac.padEnd(digits, '0') || '0');
  return BigInt(whole) * scale + BigInt(frac.slice(0, digits)) + 1n;
}
