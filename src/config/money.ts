/**
 * Prices in the config are written as providers publish them: USD per million tokens ("3.00",
 * "0.0375"), and server-tool fees in USD per thousand uses ("10.00"). The price model's unit is
 * the femtodollar (1e-15 USD) per token or use (routing/catalog.ts), so USD per million x 1e9
 * and USD per thousand x 1e12 are exact integers for up to 9 decimal places. Parsed as text: no
 * floating point touches money.
 */

/** A non-negative decimal as an integer scaled by 10^digits; throws when it is finer than that. */
function scaledDecimal(value: unknown, digits: number, where: string, what: string): bigint {
  const text = typeof value === 'number' ? numberText(value) : value;
  if (typeof text !== 'string' || !/^\d+(\.\d+)?$/.test(text.trim())) {
    throw new Error(`${where}: ${what} must be a non-negative decimal, got ${JSON.stringify(value)}`);
  }
  const [whole, frac = ''] = text.trim().split('.');
  const significant = frac.replace(/0+$/, '');
  if (significant.length > digits) throw new Error(`${where}: ${text} has more precision than prices are kept in (${digits} decimal places)`);
  return BigInt(whole) * 10n ** BigInt(digits) + BigInt(significant.padEnd(digits, '0') || '0');
}

/** A number as its shortest decimal text, without an exponent (YAML may give 0.0000001 as a number). */
function numberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const s = String(n);
  return /e/i.test(s) ? n.toFixed(20).replace(/\.?0+$/, '') : s;
}

/** The largest rate accepted: about 9 million USD per million tokens keeps every product far inside bigint and JSON. */
const MAX_RATE = BigInt(Number.MAX_SAFE_INTEGER) * 1_000n;

/** USD per million tokens -> femtodollars per token. */
export function usdPerMillionToRate(value: unknown, where: string): bigint {
  const rate = scaledDecimal(value, 9, where, 'price (USD per million tokens)');
  if (rate > MAX_RATE) throw new Error(`${where}: price ${String(value)} is too large (at most about 9 billion USD per million tokens)`);
  return rate;
}

/** USD per thousand uses -> femtodollars per use. */
export function usdPerThousandToRate(value: unknown, where: string): bigint {
  const rate = scaledDecimal(value, 12, where, 'fee (USD per thousand uses)');
  if (rate > MAX_RATE * 1_000n) throw new Error(`${where}: fee ${String(value)} is too large`);
  return rate;
}

/** A multiplier ("0.5", "2") as a fraction, exact. */
export function parseMultiplier(value: unknown, where: string): { num: bigint; den: bigint } {
  return { num: scaledDecimal(value, 6, where, 'multiplier'), den: 1_000_000n };
}

/** A rate times a multiplier, rounded up (a billed price is never below the sheet's). */
export function scaleRate(rate: bigint, m: { num: bigint; den: bigint }): bigint {
  return (rate * m.num + m.den - 1n) / m.den;
}

/** Femtodollars per token -> USD per million tokens, exact, as the config writes it. */
export function rateToUsdPerMillion(rate: bigint): string {
  return decimalText(rate, 9);
}

/** Femtodollars per use -> USD per thousand uses. */
export function rateToUsdPerThousand(rate: bigint): string {
  return decimalText(rate, 12);
}

function decimalText(v: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const frac = (v % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return `${v / scale}${frac ? `.${frac}` : ''}`;
}
