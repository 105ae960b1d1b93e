/** Small JSON helpers shared by the client protocol adapters. */
import type { ExtKey } from '../../ir/bags.js';

export type JsonObject = Record<string, unknown>;

export function isRecord(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Tool arguments (JSON text) as the object a protocol with structured tool input needs.
 * Upstreams can end mid-arguments (a `length` finish inside a tool call) or send nothing for a
 * tool without input; both become `{}` because the wire shape requires an object.
 */
export function parseToolInput(args: string): JsonObject {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    return isRecord(v) ? v : {};
  } catch {
    return {};
  }
}

/** The fields of `obj` not listed in `known`, or undefined when there are none. */
export function restOf(obj: JsonObject, known: ReadonlySet<string> | readonly string[]): JsonObject | undefined {
  const skip = known instanceof Set ? known : new Set(known);
  const rest: JsonObject = {};
  let any = false;
  for (const [k, v] of Object.entries(obj)) {
    if (skip.has(k) || v === undefined) continue;
    rest[k] = v;
    any = true;
  }
  return any ? rest : undefined;
}

/** `{ ext: { [protocol]: fields } }` when there are fields, for spreading into an IR part: `...extOf(...)`. */
export function extOf<K extends ExtKey>(protocol: K, fields: JsonObject | undefined): { ext?: { [P in K]: JsonObject } } {
  return fields ? { ext: { [protocol]: fields } as { [P in K]: JsonObject } } : {};
}

/** `{key: value}`, or `{}` when value is undefined, so optional IR fields stay absent rather than undefined. */
export function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
