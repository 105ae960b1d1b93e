/**
 * Prices in the config are written as USD per million tokens ("3.00"), the way providers publish
 * them. The ledger's unit is the nanodollar (1e-9 USD) per token, so USD/M x 1000 = nanodollars per
 * token, exact for up to three decimal places. Parsed as text: no floating point touches money.
 */
export function usdPerMillionToNanosPerToken(value: unknown, where: string): bigint {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d+(\.\d+)?$/.test(text.trim())) {
    throw new Error(`${where}: price must be a non-negative decimal (USD per million tokens), got ${JSON.stringify(value)}`);
  }
  const [whole, frac = ''] = text.trim().split('.');
  const significant = frac.replace(/0+$/, '');
  if (significant.length > 3) {
    throw new Error(`${where}: price ${text} has more precision than the ledger's unit (0.001 USD per million tokens)`);
  }
  const nanos = BigInt(whole) * 1000n + BigInt(significant.padEnd(3, '0') || '0');
  // Prices are answered as JSON numbers (GET /v1/models): keep them exact there.
  if (nanos > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${where}: price ${text} is too large (at most about 9 billion USD per million tokens)`);
  return nanos;
}
