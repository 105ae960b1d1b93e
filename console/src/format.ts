/** Money is nanodollars (1e-9 USD) on the wire; the console shows and takes dollars. */

const NANO = 1_000_000_000;

/**
 * Cents at least ($0.30, $12.00); below a dollar, up to six decimals where they say something
 * ($0.000123, $0.0042), never trailing zeros past the cents.
 */
export function dollars(nano: number | null | undefined): string {
  if (nano === null || nano === undefined) return '—';
  const d = Math.abs(nano) / NANO;
  return `${nano < 0 ? '-' : ''}$${d.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: d >= 1 ? 2 : 6 })}`;
}

/** "12.5" dollars -> 12500000000 nanodollars, exactly (no floating point on the way). */
export function toNano(text: string, field: string): number {
  const m = /^\s*(-?)(\d*)(?:\.(\d{0,9}))?\s*$/.exec(text);
  if (!m || (m[2] === '' && !m[3])) throw new Error(`${field}: write an amount in dollars, like 10 or 0.25`);
  const nano = BigInt(m[2] || '0') * 1_000_000_000n + BigInt((m[3] ?? '').padEnd(9, '0') || '0');
  const value = Number(m[1] ? -nano : nano);
  if (!Number.isSafeInteger(value)) throw new Error(`${field}: the amount is too large`);
  return value;
}

export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString('en-US');
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
