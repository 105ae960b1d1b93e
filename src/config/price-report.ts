/**
 * What `switchyard prices` shows: every catalog model's deployments with their effective prices
 * (USD per million tokens, fees per thousand uses), where each price came from, and, for a
 * configured price, each rate that differs from the price table's for the same upstream model.
 */
import type { Catalog, Deployment, Price, TierPrice, TokenRates } from '../routing/catalog.js';
import { rateToUsdPerMillion, rateToUsdPerThousand } from './money.js';
import { tablePrice } from './price-table.js';

type Rates = Record<string, string>;

export interface TierReport extends Rates {}

export interface PriceReport {
  model: string;
  deployment: string;
  provider: string;
  upstream_model: string;
  /** `config`, `config (deployment)`, `price table <version> (<provider>/<model>)`, `built-in local model`, `free`. */
  source: string;
  /** USD per million tokens, by kind. */
  rates: Rates;
  long_context?: Array<{ above: number; rates: Rates }>;
  /** USD per thousand uses, by server tool. */
  server_tools?: Rates;
  service_tiers?: Record<string, { rates: Rates; long_context?: Array<{ above: number; rates: Rates }> }>;
  /** A configured price's rates that differ from the table's (`long_context[200000].input`, ...). */
  differs_from_table?: Array<{ rate: string; configured: string; table: string }>;
}

const NAMES: Record<keyof TokenRates, string> = {
  input: 'input',
  output: 'output',
  cacheRead: 'cache_read',
  cacheWrite: 'cache_write',
  cacheWrite1h: 'cache_write_1h',
  reasoning: 'reasoning',
  inputAudio: 'input_audio',
  inputImage: 'input_image',
  outputAudio: 'output_audio',
  outputImage: 'output_image',
};

function ratesOf(r: TokenRates): Rates {
  const out: Rates = {};
  for (const [k, name] of Object.entries(NAMES)) {
    const v = r[k as keyof TokenRates];
    if (v !== undefined) out[name] = rateToUsdPerMillion(v);
  }
  return out;
}

function tiersOf(p: TierPrice) {
  return p.tiers?.map((t) => ({ above: t.above, rates: ratesOf(t.rates) }));
}

/** Every rate of a price, flattened with its path, for comparing two prices. */
function flatten(p: Price): Map<string, string> {
  const out = new Map<string, string>();
  const add = (prefix: string, t: TierPrice) => {
    for (const [k, v] of Object.entries(ratesOf(t))) out.set(`${prefix}${k}`, v);
    for (const tier of t.tiers ?? []) for (const [k, v] of Object.entries(ratesOf(tier.rates))) out.set(`${prefix}long_context[${tier.above}].${k}`, v);
  };
  add('', p);
  // Per-use fees are the standard tier's in every service tier: compared once.
  for (const [tool, fee] of Object.entries(p.perUse ?? {})) out.set(`server_tools.${tool}`, rateToUsdPerThousand(fee));
  for (const [name, t] of Object.entries(p.serviceTiers ?? {})) add(`service_tiers.${name}.`, t);
  return out;
}

function differences(configured: Price, table: Price): PriceReport['differs_from_table'] {
  const a = flatten(configured);
  const b = flatten(table);
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  return keys.filter((k) => a.get(k) !== b.get(k)).map((k) => ({ rate: k, configured: a.get(k) ?? '-', table: b.get(k) ?? '-' }));
}

function report(modelId: string, d: Deployment): PriceReport {
  const p = d.price;
  const out: PriceReport = {
    model: modelId,
    deployment: d.id,
    provider: d.provider.id,
    upstream_model: d.upstreamModel,
    source: d.priceSource ?? 'unknown',
    rates: ratesOf(p),
  };
  const tiers = tiersOf(p);
  if (tiers) out.long_context = tiers;
  if (p.perUse) out.server_tools = Object.fromEntries(Object.entries(p.perUse).map(([k, v]) => [k, rateToUsdPerThousand(v)]));
  if (p.serviceTiers) {
    out.service_tiers = Object.fromEntries(Object.entries(p.serviceTiers).map(([name, t]) => [name, { rates: ratesOf(t), ...(t.tiers ? { long_context: tiersOf(t) } : {}) }]));
  }
  if (out.source.startsWith('config')) {
    const table = tablePrice(d.provider.baseUrl, d.upstreamModel, d.provider.type);
    const diff = table ? differences(p, table.price) : undefined;
    if (diff?.length) out.differs_from_table = diff;
  }
  return out;
}

export function priceReport(catalog: Catalog): PriceReport[] {
  return [...catalog.models.values()].flatMap((m) => m.deployments.map((d) => report(m.id, d)));
}

/** The report as text: one block per deployment, rates in USD per million tokens. */
export function priceReportText(rows: PriceReport[]): string {
  const line = (r: Rates) => Object.entries(r).map(([k, v]) => `${k} ${v}`).join(', ');
  const out: string[] = [];
  for (const r of rows) {
    out.push(`${r.deployment} (${r.upstream_model} at ${r.provider}): ${r.source}`);
    out.push(`  ${line(r.rates)}`);
    for (const t of r.long_context ?? []) out.push(`  above ${t.above} prompt tokens: ${line(t.rates)}`);
    if (r.server_tools) out.push(`  per thousand uses: ${line(r.server_tools)}`);
    for (const [name, t] of Object.entries(r.service_tiers ?? {})) {
      out.push(`  service tier ${name}: ${line(t.rates)}`);
      for (const lc of t.long_context ?? []) out.push(`    above ${lc.above} prompt tokens: ${line(lc.rates)}`);
    }
    for (const d of r.differs_from_table ?? []) out.push(`  ! ${d.rate}: configured ${d.configured}, the price table ${d.table}`);
  }
  out.push('', 'Rates in USD per million tokens; server tools in USD per thousand uses. "!" marks a configured rate that differs from the price table\'s.');
  return `${out.join('\n')}\n`;
}
