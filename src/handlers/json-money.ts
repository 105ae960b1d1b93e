/** Money and token counts are bigint inside; JSON numbers outside (exact below 2^53). */
export function toJsonNumber(v: bigint | number): number {
  if (typeof v === 'number') return v;
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(`value ${v} does not fit a JSON number exactly`);
  }
  return Number(v);
}

export const MONEY_UNIT = 'nanodollars';
