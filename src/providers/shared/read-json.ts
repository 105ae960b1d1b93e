/** Lenient readers for upstream JSON: a missing or mistyped field reads as empty, never throws. */
export type Json = Record<string, unknown>;

/** A plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A finite number, else 0 (token counts: absent means none). */
export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** A string, else ''. */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
