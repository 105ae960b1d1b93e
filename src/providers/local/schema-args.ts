/**
 * Tool-call arguments that validate against the tool's JSON schema. Strings come from the
 * user's message where possible (quoted text, then capitalized words); numbers are 1 moved into
 * the allowed range; booleans true; enums their first value; arrays one item (or minItems);
 * objects get every property, required or not.
 *
 * The schema comes from the client, so the work is bounded: about MAX_CHARS characters of JSON
 * in all. A schema asking for more (`minItems` 40,000 of `minLength` 100,000) gets fewer items
 * and shorter strings, where a hosted model would run into its output ceiling; the answer is then
 * cut by the ceiling anyway.
 */

type Schema = Record<string, unknown>;

/** Supplies string values in turn; cycles through what the user wrote. */
export interface StringSource {
  next(): string;
}

const MAX_DEPTH = 8;
/** More than any local model's ceiling can emit (64,000 tokens of a few characters each). */
export const MAX_CHARS = 512 * 1024;

/** What one generation may still spend, and where its strings come from. */
interface Budget {
  strings: StringSource;
  left: number;
}

export function argsForSchema(schema: Schema, strings: StringSource): Record<string, unknown> {
  const value = valueFor(schema, { strings, left: MAX_CHARS }, 0);
  return isPlainObject(value) ? value : {};
}

function valueFor(schema: unknown, budget: Budget, depth: number): unknown {
  budget.left -= 1; // its separator
  if (!isPlainObject(schema) || depth > MAX_DEPTH) return 'example';
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const branch = branches.find((b) => !(isPlainObject(b) && b.type === 'null')) ?? branches[0];
      return valueFor({ ...withoutKey(schema, key), ...(branch as Schema) }, budget, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return valueFor(mergeAll(withoutKey(schema, 'allOf'), schema.allOf), budget, depth + 1);
  }
  switch (pickType(schema)) {
    case 'string':
      return stringFor(schema, budget);
    case 'number':
      return numberFor(schema, false);
    case 'integer':
      return numberFor(schema, true);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return arrayFor(schema, budget, depth);
    case 'object':
      return objectFor(schema, budget, depth);
    default:
      return 'example';
  }
}

function pickType(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') ?? t[0]) as string | undefined;
  if (isPlainObject(schema.properties) || Array.isArray(schema.required)) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  return undefined;
}

const FORMATS: Record<string, string> = {
  date: '2025-01-01',
  'date-time': '2025-01-01T00:00:00Z',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
  hostname: 'example.com',
};

function stringFor(schema: Schema, budget: Budget): string {
  let s = typeof schema.format === 'string' && FORMATS[schema.format] ? FORMATS[schema.format] as string : budget.strings.next();
  if (typeof schema.minLength === 'number' && s.length < schema.minLength) s = s.padEnd(Math.min(schema.minLength, s.length + Math.max(0, budget.left)), 'x');
  if (typeof schema.maxLength === 'number' && s.length > schema.maxLength) s = s.slice(0, Math.max(0, schema.maxLength));
  budget.left -= s.length + 2; // and its quotes
  return s;
}

function numberFor(schema: Schema, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  let lo = -Infinity;
  let hi = Infinity;
  if (typeof schema.minimum === 'number') lo = schema.exclusiveMinimum === true ? schema.minimum + step : schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number') lo = Math.max(lo, schema.exclusiveMinimum + step);
  if (typeof schema.maximum === 'number') hi = schema.exclusiveMaximum === true ? schema.maximum - step : schema.maximum;
  if (typeof schema.exclusiveMaximum === 'number') hi = Math.min(hi, schema.exclusiveMaximum - step);
  let v = Math.min(Math.max(1, lo), hi);
  if (integer) v = Math.ceil(v) <= hi ? Math.ceil(v) : Math.floor(v);
  const m = schema.multipleOf;
  if (typeof m === 'number' && m > 0) v = Number.isFinite(lo) ? Math.ceil(lo / m) * m : m;
  return v;
}

function arrayFor(schema: Schema, budget: Budget, depth: number): unknown[] {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
  if (prefix) return prefix.map((s) => valueFor(s, budget, depth + 1));
  const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  const n = Math.min(Math.max(1, min), max);
  const out: unknown[] = [];
  // The first item always, however spent the budget, so an item of each array is there.
  while (out.length < n && (out.length === 0 || budget.left > 0)) out.push(valueFor(schema.items ?? {}, budget, depth + 1));
  return out;
}

function objectFor(schema: Schema, budget: Budget, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = isPlainObject(schema.properties) ? schema.properties : {};
  for (const [name, sub] of Object.entries(props)) {
    budget.left -= name.length + 3; // quoted, and its colon
    out[name] = valueFor(sub, budget, depth + 1);
  }
  if (Array.isArray(schema.required)) {
    for (const name of schema.required) if (typeof name === 'string' && !(name in out)) out[name] = 'example';
  }
  return out;
}

function mergeAll(base: Schema, parts: unknown[]): Schema {
  const merged: Schema = { ...base };
  const properties: Schema = isPlainObject(base.properties) ? { ...base.properties } : {};
  const required: unknown[] = Array.isArray(base.required) ? [...base.required] : [];
  for (const p of parts) {
    if (!isPlainObject(p)) continue;
    Object.assign(merged, p);
    if (isPlainObject(p.properties)) Object.assign(properties, p.properties);
    if (Array.isArray(p.required)) required.push(...p.required);
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.length > 0) merged.required = required;
  return merged;
}

function withoutKey(schema: Schema, key: string): Schema {
  const { [key]: _dropped, ...rest } = schema;
  return rest;
}

function isPlainObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
