/**
 * JSON schema -> fast-check arbitrary, for the subset our document uses: $ref, allOf (merged),
 * anyOf/oneOf, enum/const, objects (required, optional, additionalProperties), arrays with
 * bounds, numbers with bounds, strings with length and simple patterns. Optional fields are
 * usually absent and every choice shrinks toward its first option, so a failure shrinks to a
 * small request.
 */
import fc from 'fast-check';
import type { Schema } from './load-contract.js';

/** Property path from the request root, e.g. ['messages', '*', 'content']. */
export type SchemaPath = readonly string[];

export interface ArbitraryOptions {
  resolve(schema: Schema): Schema;
  /** A replacement arbitrary for the value at `path` (model ids, small max_tokens, ...). */
  override?(path: SchemaPath, schema: Schema): fc.Arbitrary<unknown> | undefined;
  /** Optional properties always generated at this path (e.g. max_tokens, to keep cases fast). */
  forced?(path: SchemaPath): readonly string[];
  /** Objects and arrays deeper than this are kept minimal (recursive schemas end). */
  maxDepth?: number;
}

const ABSENT = Symbol('absent');

/** A small JSON value for unknown fields. */
export const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);

const extraKey = fc.oneof(fc.constantFrom('x_extra', '__proto__', 'constructor', 'toString', ''), fc.string({ minLength: 1, maxLength: 6 }));

export function schemaArbitrary(schema: Schema, opts: ArbitraryOptions, path: SchemaPath = [], depth = 0): fc.Arbitrary<unknown> {
  const s = opts.resolve(schema);
  const override = opts.override?.(path, s);
  if (override) return override;
  if (!s || Object.keys(s).length === 0) return jsonValue;
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (Array.isArray(s.allOf)) return schemaArbitrary(mergeAllOf(s, opts), opts, path, depth);
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (branches) {
    // Bounds written next to an anyOf (TypeSpec puts `minimum` beside `anyOf: [integer, null]`) apply to each branch.
    const { oneOf: _o, anyOf: _a, discriminator: _d, description: _s, ...outer } = s;
    const list = branches.map((b) => ({ ...opts.resolve(b), ...pickBounds(outer) }));
    const usable = depth >= (opts.maxDepth ?? 8) ? list.filter((b) => !isComposite(b, opts)).slice(0, 1) : list;
    const choices = (usable.length ? usable : list.slice(0, 1)).map((b) => schemaArbitrary(b, opts, path, depth));
    return choices.length === 1 ? choices[0] : fc.oneof(...choices);
  }
  switch (typeOf(s)) {
    case 'object':
      return objectArbitrary(s, opts, path, depth);
    case 'array':
      return arrayArbitrary(s, opts, path, depth);
    case 'string':
      return stringArbitrary(s);
    case 'integer':
      return fc.integer({ min: bound(s.minimum, s.exclusiveMinimum, 1, -(2 ** 31)), max: bound(s.maximum, s.exclusiveMaximum, -1, 2 ** 31 - 1) });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return jsonValue;
  }
}

function objectArbitrary(s: Schema, opts: ArbitraryOptions, path: SchemaPath, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>((s.required ?? []) as string[]);
  const forced = new Set(opts.forced?.(path) ?? []);
  const minimal = depth >= (opts.maxDepth ?? 8);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  const optionalCount = Object.keys(props).filter((k) => !required.has(k)).length;
  for (const [key, sub] of Object.entries(props)) {
    const inner = schemaArbitrary(sub, opts, [...path, key], depth + 1);
    if (required.has(key) || forced.has(key)) model[key] = inner;
    else if (!minimal) {
      // About two optional fields per object: enough variety, few enough that most requests stay meaningful.
      model[key] = fc.oneof({ weight: Math.max(optionalCount, 2), arbitrary: fc.constant(ABSENT) }, { weight: 2, arbitrary: inner });
    }
  }
  const extra = s.additionalProperties;
  const extras =
    extra && !minimal && Object.keys(props).length > 0
      ? fc.oneof({ weight: 12, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(extraKey, extra === true ? jsonValue : schemaArbitrary(extra, opts, [...path, '?'], depth + 1), { maxKeys: 2 }) })
      : extra && Object.keys(props).length === 0 && !minimal
        ? fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), extra === true ? jsonValue : schemaArbitrary(extra, opts, [...path, '?'], depth + 1), { maxKeys: 3 })
        : fc.constant({});
  return fc.tuple(fc.record(model), extras).map(([known, more]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(more as Record<string, unknown>)) if (!(k in props)) defineField(out, k, v);
    for (const [k, v] of Object.entries(known)) if (v !== ABSENT) defineField(out, k, v);
    return out;
  });
}

/** Own enumerable property even for `__proto__`, so JSON.stringify sends it. */
function defineField(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function arrayArbitrary(s: Schema, opts: ArbitraryOptions, path: SchemaPath, depth: number): fc.Arbitrary<unknown> {
  const minLength = s.minItems ?? 0;
  const minimal = depth >= (opts.maxDepth ?? 8);
  const maxLength = minimal ? minLength : Math.min(s.maxItems ?? Infinity, minLength + 3);
  if (maxLength === 0) return fc.constant([]);
  return fc.array(schemaArbitrary(s.items ?? {}, opts, [...path, '*'], depth + 1), { minLength, maxLength });
}

function stringArbitrary(s: Schema): fc.Arbitrary<string> {
  if (typeof s.pattern === 'string') {
    const re = new RegExp(s.pattern);
    try {
      return fc.stringMatching(re).filter((x) => lengthOk(s, x));
    } catch {
      // fast-check cannot build from lookaheads (`^(?!custom$)`): filter plain strings instead.
      return fc.string({ maxLength: 12 }).filter((x) => re.test(x) && lengthOk(s, x));
    }
  }
  const minLength = s.minLength ?? 0;
  const maxLength = Math.min(s.maxLength ?? minLength + 12, minLength + 12);
  return fc.oneof(fc.string({ minLength, maxLength }), fc.string({ minLength, maxLength, unit: 'grapheme' }));
}

function lengthOk(s: Schema, x: string): boolean {
  return x.length >= (s.minLength ?? 0) && x.length <= (s.maxLength ?? Infinity);
}

function bound(inclusive: number | undefined, exclusive: number | undefined, step: number, fallback: number): number {
  if (typeof exclusive === 'number') return exclusive + step;
  return typeof inclusive === 'number' ? inclusive : fallback;
}

function pickBounds(s: Schema): Schema {
  const out: Schema = {};
  for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems']) if (k in s) out[k] = s[k];
  return out;
}

/** allOf of object schemas -> one object schema (our document uses allOf for refs with a description). */
function mergeAllOf(s: Schema, opts: ArbitraryOptions): Schema {
  const { allOf, description: _d, ...rest } = s;
  const parts = (allOf as Schema[]).map((p) => opts.resolve(p));
  if (parts.length === 1 && Object.keys(rest).length === 0) return parts[0];
  const merged: Schema = { ...rest };
  for (const p of parts) {
    for (const [k, v] of Object.entries(p)) {
      if (k === 'properties') merged.properties = { ...(merged.properties ?? {}), ...v };
      else if (k === 'required') merged.required = [...(merged.required ?? []), ...v];
      else merged[k] ??= v;
    }
  }
  return merged;
}

export function typeOf(s: Schema): string | undefined {
  if (typeof s.type === 'string') return s.type;
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return undefined;
}

function isComposite(s: Schema, opts: ArbitraryOptions): boolean {
  const r = opts.resolve(s);
  const t = typeOf(r);
  return t === 'object' || t === 'array' || Boolean(r.oneOf || r.anyOf || r.allOf);
}
