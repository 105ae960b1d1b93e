import type { Usage } from '../ir/usage.js';
import type { Price } from '../routing/catalog.js';

function tokens(n: number, what: string): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} is not a token count: ${n}`);
  return BigInt(n);
}

/**
 * Exact cost in nanodollars: prices are per token, so this is integer arithmetic only.
 * Reasoning tokens are inside output.total and billed as output.
 */
export function costOf(usage: Usage, price: Price): bigint {
  return (
    tokens(usage.input.noCache, 'input.noCache') * price.input +
    tokens(usage.input.cacheRead, 'input.cacheRead') * price.cacheRead +
    tokens(usage.input.cacheWrite, 'input.cacheWrite') * price.cacheWrite +
    tokens(usage.output.total, 'output.total') * price.output
  );
}

/**
 * The hold for a request that may be served by any of `prices` (the fallback candidates):
 * all input at the highest input price plus the full output budget at the highest output price,
 * so whichever candidate serves it, the worst case is covered. Cache reads are not assumed.
 */
export function holdAmount(inputTokens: number, maxOutputTokens: number, prices: Price[]): bigint {
  if (prices.length === 0) throw new RangeError('holdAmount needs at least one candidate price');
  const max = (pick: (p: Price) => bigint) => prices.map(pick).reduce((a, b) => (b > a ? b : a));
  // Cache writes may cost more than plain input, and the provider decides what gets written.
  const inputPrice = max((p) => (p.cacheWrite > p.input ? p.cacheWrite : p.input));
  return tokens(inputTokens, 'inputTokens') * inputPrice + tokens(maxOutputTokens, 'maxOutputTokens') * max((p) => p.output);
}

/** What a hold needs of one fallback candidate (the routing Candidate satisfies it). */
export interface HoldCandidate {
  maxTokens: number;
  price: Price;
}

/**
 * The hold the pipeline places for a request, as a pure function so callers and tests can know
 * it exactly. It covers the whole fallback chain: every attempt is billed (its input, and its
 * output up to its ceiling when it refuses late), so the worst case is the sum of each
 * candidate's holdAmount. Never zero (the holds table requires a positive amount, so even a
 * free model holds 1 unit).
 */
export function requestHold(inputTokens: number, candidates: HoldCandidate[]): bigint {
  if (candidates.length === 0) throw new RangeError('requestHold needs at least one candidate');
  const worstCase = candidates.reduce((sum, c) => sum + holdAmount(inputTokens, c.maxTokens, [c.price]), 0n);
  return worstCase > 0n ? worstCase : 1n;
}
