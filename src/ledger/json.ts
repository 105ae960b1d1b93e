/**
 * JSON for jsonb parameters: bigints (e.g. costs inside attempts) become exact decimal strings,
 * and a NUL character, which jsonb cannot hold (an upstream's error message may carry one),
 * becomes U+FFFD instead of failing the statement.
 */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : typeof v === 'string' && v.includes('\0') ? v.replaceAll('\0', '\uFFFD') : v));
}
