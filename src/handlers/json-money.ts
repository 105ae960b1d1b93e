import { unitsAsNanosText } from '../ledger/index.js';

/** Money and token counts are bigint inside; JSON numbers outside (exact below 2^53). */
export function toJsonNumber(v: bigint | number): number {
  if (typeof v === 'number') return v;
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`value ${v} does not fit a JSON number exactly`);
  }
  return Number(v);
}

export const MONEY_UNIT = 'nanodollars';

/**
 * A rate (femtodollars per token, routing/catalog.ts) as nanodollars per token, a JSON number
 * from its exact decimal text (37_500_000 -> 37.5).
 */
export function rateAsNanos(rate: bigint): number {
  return Number(unitsAsNanosText(rate));
}
