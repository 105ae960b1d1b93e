import type { Usage } from '../ir/usage.js';
import { RATE_UNITS_PER_NANODOLLAR, type Price, type TierPrice, type TokenRates } from '../routing/catalog.js';

function tokens(n: number | undefined, what: string): bigint {
  if (n === undefined) return 0n;
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} is not a token count: ${n}`);
  return BigInt(n);
}

/** Rate units (femtodollars) up to whole nanodollars: the one rounding a request's cost gets. */
export function roundUpToNanos(units: bigint): bigint {
  return (units + RATE_UNITS_PER_NANODOLLAR - 1n) / RATE_UNITS_PER_NANODOLLAR;
}

/** Rate units (femtodollars) as nanodollars in exact decimal text: 37_500_000 -> "37.5". */
export function unitsAsNanosText(units: bigint): string {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  const digits = RATE_UNITS_PER_NANODOLLAR.toString().length - 1;
  const frac = (abs % RATE_UNITS_PER_NANODOLLAR).toString().padStart(digits, '0').replace(/0+$/, '');
  return `${sign}${abs / RATE_UNITS_PER_NANODOLLAR}${frac ? `.${frac}` : ''}`;
}

/** One kind of token (or server-tool use) with its count and unit price, as an invoice line. */
export interface PricedLine {
  kind: string;
  /** Tokens, or uses for a server tool. */
  count: number;
  /** Femtodollars per token (or per use). */
  rate: bigint;
}

/** What an attempt's usage costs, and why: the lines and the tiers they were priced at. */
export interface PricedUsage {
  lines: PricedLine[];
  /** Femtodollars, exact: the sum of count x rate. */
  exact: bigint;
  /** The service tier whose prices applied, when the answer named one priced apart. */
  serviceTier?: string;
  /** The long-context threshold the prompt was above, when a tier applied. */
  above?: number;
}

/** The prices of the service tier that served (the answer's), else the standard ones. */
export function serviceTierPrice(price: Price, tier: string | undefined): { prices: TierPrice; name?: string } {
  const own = tier !== undefined ? price.serviceTiers?.[tier] : undefined;
  return own ? { prices: own, name: tier } : { prices: price };
}

/** The rates for a prompt of `promptTokens`: the highest long-context tier it is above applies to the whole request. */
export function ratesFor(p: TierPrice, promptTokens: number): { rates: TokenRates; above?: number } {
  let found: { rates: TokenRates; above?: number } = { rates: p };
  for (const t of p.tiers ?? []) if (promptTokens > t.above) found = { rates: t.rates, above: t.above };
  return found;
}

/**
 * The exact price of one attempt's usage, line by line. Cache writes are split by lifetime,
 * audio and image tokens and reasoning take their own rates where priced apart (else the text
 * input or output rate), and server tools are billed per use. The prompt's length (all of its
 * input, cached or not) picks the long-context tier; the answer's service tier picks the prices.
 */
export function priceUsage(usage: Usage, price: Price): PricedUsage {
  const { prices, name } = serviceTierPrice(price, usage.serviceTier);
  const u = usage;
  const noCache = tokens(u.input.noCache, 'input.noCache');
  const cacheRead = tokens(u.input.cacheRead, 'input.cacheRead');
  const cacheWrite = tokens(u.input.cacheWrite, 'input.cacheWrite');
  const output = tokens(u.output.total, 'output.total');
  const prompt = noCache + cacheRead + cacheWrite;
  const { rates: r, above } = ratesFor(prices, Number(prompt));
  const write1h = min(tokens(u.input.cacheWrite1h, 'input.cacheWrite1h'), cacheWrite);
  const inAudio = min(tokens(u.input.audio, 'input.audio'), noCache);
  const inImage = min(tokens(u.input.image, 'input.image'), noCache - inAudio);
  const reasoning = r.reasoning !== undefined ? min(tokens(u.output.reasoning, 'output.reasoning'), output) : 0n;
  const outAudio = min(tokens(u.output.audio, 'output.audio'), output - reasoning);
  const outImage = min(tokens(u.output.image, 'output.image'), output - reasoning - outAudio);
  const lines: PricedLine[] = [];
  const add = (kind: string, count: bigint, rate: bigint) => {
    if (count > 0n) lines.push({ kind, count: Number(count), rate });
  };
  add('input', noCache - inAudio - inImage, r.input);
  add('input_audio', inAudio, r.inputAudio ?? r.input);
  add('input_image', inImage, r.inputImage ?? r.input);
  add('cache_read', cacheRead, r.cacheRead);
  add('cache_write_5m', cacheWrite - write1h, r.cacheWrite);
  add('cache_write_1h', write1h, r.cacheWrite1h);
  add('output', output - reasoning - outAudio - outImage, r.output);
  add('reasoning', reasoning, r.reasoning ?? r.output);
  add('output_audio', outAudio, r.outputAudio ?? r.output);
  add('output_image', outImage, r.outputImage ?? r.output);
  for (const [tool, uses] of Object.entries(u.serverTools ?? {})) {
    // A service tier priced apart keeps the standard per-use fees unless it states its own.
    const fee = prices.perUse?.[tool] ?? price.perUse?.[tool];
    if (fee !== undefined) add(tool, tokens(uses, `serverTools.${tool}`), fee);
  }
  const exact = lines.reduce((sum, l) => sum + BigInt(l.count) * l.rate, 0n);
  return { lines, exact, ...(name !== undefined ? { serviceTier: name } : {}), ...(above !== undefined ? { above } : {}) };
}

/** An attempt's cost in nanodollars, rounded up once (a request of several attempts: see chargesOf). */
export function costOf(usage: Usage, price: Price): bigint {
  return roundUpToNanos(priceUsage(usage, price).exact);
}

/**
 * Splits a request's exact total into whole-nanodollar charges that add up to the total rounded
 * up once: each attempt gets what the running sum's rounding adds, so a request of many cheap
 * attempts pays the exact sum rounded up, not every attempt's rounding.
 */
export function splitRoundedUp(exacts: bigint[]): bigint[] {
  let sum = 0n;
  let charged = 0n;
  return exacts.map((e) => {
    sum += e;
    const upTo = roundUpToNanos(sum);
    const part = upTo - charged;
    charged = upTo;
    return part;
  });
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function max(values: Array<bigint | undefined>): bigint {
  return values.reduce<bigint>((m, v) => (v !== undefined && v > m ? v : m), 0n);
}

/** What a hold needs of one fallback candidate (the routing Candidate satisfies it). */
export interface HoldCandidate {
  maxTokens: number;
  /** The price it is billed at, or every price it may be billed at (its deployments'). */
  price: Price | Price[];
  /**
   * How far the provider's own tokenizer may count above the gateway's (0.25: a quarter more),
   * so the prompt is held at what the provider may bill.
   */
  inputMargin?: number;
}

/** What a request may be billed for beyond its tokens, as it asked for it. */
export interface HoldHints {
  /** It asks for one-hour cache writes: its prompt may all be written at that rate. */
  cacheWrite1h?: boolean;
  /** The most uses of each server tool it allows (`max_uses`). */
  serverToolUses?: Record<string, number>;
}

/**
 * The worst case of one candidate at one price, in femtodollars: the prompt (with the tokenizer's
 * margin) at the highest input-side rate it can incur (a cache write, the one-hour one when
 * asked for), the whole output budget at the highest output-side rate, the long-context tier
 * that prompt reaches, and each server tool's allowed uses, over every service tier.
 */
function worstCase(promptTokens: number, maxOutputTokens: number, price: Price, hints: HoldHints): bigint {
  const tiers: TierPrice[] = [price, ...Object.values(price.serviceTiers ?? {})];
  return tiers.reduce((worst, t) => {
    const { rates: r } = ratesFor(t, promptTokens);
    const inRate = max([r.input, r.cacheWrite, hints.cacheWrite1h ? r.cacheWrite1h : undefined, r.inputAudio, r.inputImage]);
    const outRate = max([r.output, r.reasoning, r.outputAudio, r.outputImage]);
    let total = tokens(promptTokens, 'inputTokens') * inRate + tokens(maxOutputTokens, 'maxOutputTokens') * outRate;
    for (const [tool, uses] of Object.entries(hints.serverToolUses ?? {})) total += tokens(uses, `uses of ${tool}`) * (t.perUse?.[tool] ?? price.perUse?.[tool] ?? 0n);
    return total > worst ? total : worst;
  }, 0n);
}

/** The prompt as the provider may count it: the gateway's count plus the tokenizer's margin. */
export function promptWithMargin(inputTokens: number, margin = 0): number {
  // In thousandths, so the product is an exact integer (190,000 x 1.1 is 209,000.00000000003 in floating point).
  return margin > 0 ? Math.ceil((inputTokens * Math.round(1000 + margin * 1000)) / 1000) : inputTokens;
}

/**
 * The hold for a request one of `prices` serves, in nanodollars (rounded up): the worst case at
 * the highest of them.
 */
export function holdAmount(inputTokens: number, maxOutputTokens: number, prices: Price[], hints: HoldHints = {}): bigint {
  if (prices.length === 0) throw new RangeError('holdAmount needs at least one candidate price');
  return roundUpToNanos(prices.reduce((m, p) => max([m, worstCase(inputTokens, maxOutputTokens, p, hints)]), 0n));
}

/**
 * The hold the pipeline places for a request, as a pure function so callers and tests can know
 * it exactly. It covers the whole fallback chain: every attempt is billed (its input, and its
 * output up to its ceiling when it refuses late), so the worst case is the sum of each
 * candidate's worst case, rounded up once. Never zero (the holds table requires a positive
 * amount, so even a free model holds 1 unit).
 */
export function requestHold(inputTokens: number, candidates: HoldCandidate[], hints: HoldHints = {}): bigint {
  if (candidates.length === 0) throw new RangeError('requestHold needs at least one candidate');
  const exact = candidates.reduce((sum, c) => {
    const prices = Array.isArray(c.price) ? c.price : [c.price];
    const prompt = promptWithMargin(inputTokens, c.inputMargin);
    return sum + prices.reduce((m, p) => max([m, worstCase(prompt, c.maxTokens, p, hints)]), 0n);
  }, 0n);
  const worst = roundUpToNanos(exact);
  return worst > 0n ? worst : 1n;
}
