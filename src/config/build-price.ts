/**
 * A deployment's price from what the config or the price table states, completed by the
 * providers' documented multipliers (price-rules.ts): every rate a request can incur is set, and
 * none below the input price unless a rule or a stated price says so.
 */
import type { Price, TierPrice, TokenRates } from '../routing/catalog.js';
import { parseMultiplier, scaleRate, usdPerMillionToRate, usdPerThousandToRate } from './money.js';
import type { DocumentedRules, Multiplier } from './price-rules.js';

/** Rates as stated (femtodollars per token); what is absent is derived. */
export type StatedRates = Partial<TokenRates>;

export interface StatedPrice extends StatedRates {
  /** Long-context tiers: the rates stated for prompts above `above` tokens. */
  tiers?: Array<{ above: number } & StatedRates>;
  /** Femtodollars per use, by server tool. */
  perUse?: Record<string, bigint>;
  /** Service tiers: their own prices, or a multiple of the standard ones. */
  serviceTiers?: Record<string, StatedPrice | { multiplier: Multiplier }>;
}

/** The config's names of the rates (USD per million tokens). */
const RATE_KEYS = {
  input: 'input',
  output: 'output',
  cache_read: 'cacheRead',
  cache_write: 'cacheWrite',
  cache_write_1h: 'cacheWrite1h',
  reasoning: 'reasoning',
  input_audio: 'inputAudio',
  input_image: 'inputImage',
  output_audio: 'outputAudio',
  output_image: 'outputImage',
} as const satisfies Record<string, keyof TokenRates>;

export const CONFIG_RATE_KEYS = Object.keys(RATE_KEYS);

type Raw = Record<string, unknown>;

function statedRates(raw: Raw, where: string): StatedRates {
  const out: StatedRates = {};
  for (const [key, field] of Object.entries(RATE_KEYS)) {
    if (raw[key] !== undefined) out[field] = usdPerMillionToRate(raw[key], `${where}.${key}`);
  }
  return out;
}

/** A `price:` block of the config, parsed (the schema has checked its shape). Throws with `where` in the message. */
export function parseConfigPrice(raw: Raw, where: string): StatedPrice {
  const out: StatedPrice = statedRates(raw, where);
  const tiers = raw.long_context as Raw[] | undefined;
  if (tiers) {
    out.tiers = tiers.map((t, i) => ({ above: t.above as number, ...statedRates(t, `${where}.long_context.${i}`) }));
    const aboves = out.tiers.map((t) => t.above);
    if (new Set(aboves).size !== aboves.length) throw new Error(`${where}.long_context: two tiers start above the same prompt length`);
  }
  const tools = raw.server_tools as Raw | undefined;
  if (tools) out.perUse = Object.fromEntries(Object.entries(tools).map(([k, v]) => [k, usdPerThousandToRate(v, `${where}.server_tools.${k}`)]));
  const serviceTiers = raw.service_tiers as Record<string, Raw> | undefined;
  if (serviceTiers) {
    out.serviceTiers = Object.fromEntries(
      Object.entries(serviceTiers).map(([name, t]) => [
        name,
        t.multiplier !== undefined ? { multiplier: parseMultiplier(t.multiplier, `${where}.service_tiers.${name}.multiplier`) } : parseConfigPrice(t, `${where}.service_tiers.${name}`),
      ]),
    );
  }
  return out;
}

/**
 * Every rate, from the stated ones: cache rates by the documented multipliers of the (tier's)
 * input price, else the input price; a 1-hour write by its multiplier, else the 5-minute write.
 * A long-context tier's unstated rates follow the same rules from its own input price, and its
 * unstated output is the base tier's.
 */
function completeRates(s: StatedRates, rules: DocumentedRules | undefined, base?: TokenRates): TokenRates {
  const input = s.input ?? base?.input ?? 0n;
  const derive = (m: Multiplier | undefined) => (m ? scaleRate(input, m) : input);
  const cacheWrite = s.cacheWrite ?? derive(rules?.cacheWrite);
  const out: TokenRates = {
    input,
    output: s.output ?? base?.output ?? 0n,
    cacheRead: s.cacheRead ?? derive(rules?.cacheRead),
    cacheWrite,
    cacheWrite1h: s.cacheWrite1h ?? (rules?.cacheWrite1h ? scaleRate(input, rules.cacheWrite1h) : cacheWrite),
  };
  for (const k of ['reasoning', 'inputAudio', 'inputImage', 'outputAudio', 'outputImage'] as const) {
    const v = s[k] ?? base?.[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function buildTierPrice(s: StatedPrice, rules: DocumentedRules | undefined): TierPrice {
  const base = completeRates(s, rules);
  const out: TierPrice = { ...base };
  if (s.tiers?.length) {
    out.tiers = [...s.tiers].sort((a, b) => a.above - b.above).map(({ above, ...rates }) => ({ above, rates: completeRates(rates, rules, base) }));
  }
  if (s.perUse && Object.keys(s.perUse).length) out.perUse = { ...s.perUse };
  return out;
}

function scaleRates(r: TokenRates, m: Multiplier): TokenRates {
  const out = { ...r };
  for (const k of Object.keys(out) as Array<keyof TokenRates>) if (out[k] !== undefined) out[k] = scaleRate(out[k]!, m);
  return out;
}

/** A whole tier's prices times a multiplier; per-use fees are not part of a service tier's discount. */
function scalePrice(p: TierPrice, m: Multiplier): TierPrice {
  const { tiers, perUse, ...rates } = p;
  return {
    ...scaleRates(rates, m),
    ...(tiers ? { tiers: tiers.map((t) => ({ above: t.above, rates: scaleRates(t.rates, m) })) } : {}),
    ...(perUse ? { perUse } : {}),
  };
}

/** The price billed, from what was stated and the provider's documented rules. */
export function buildPrice(stated: StatedPrice, rules: DocumentedRules | undefined): Price {
  const standard = buildTierPrice(stated, rules);
  const serviceTiers: Record<string, TierPrice> = {};
  for (const [name, m] of Object.entries(rules?.serviceTiers ?? {})) serviceTiers[name] = scalePrice(standard, m);
  for (const [name, t] of Object.entries(stated.serviceTiers ?? {})) {
    serviceTiers[name] = 'multiplier' in t ? scalePrice(standard, t.multiplier) : buildTierPrice({ perUse: stated.perUse, ...t }, rules);
  }
  return Object.keys(serviceTiers).length ? { ...standard, serviceTiers } : standard;
}

/** The zero price of a model served for nothing (`free: true`). */
export function freePrice(): Price {
  return { input: 0n, output: 0n, cacheRead: 0n, cacheWrite: 0n, cacheWrite1h: 0n };
}
