/** JSON for jsonb parameters: bigints (e.g. costs inside attempts) become exact decimal strings. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
