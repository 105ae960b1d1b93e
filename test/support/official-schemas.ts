/**
 * Test-only: validate values against the vendors' official OpenAPI schemas in the reference folder
 * (tools/reference.ts; OpenAI: openai-openapi.yaml, Anthropic: anthropic-openapi.json). Without that
 * folder the official check is skipped (`validateOfficial` finds nothing) and the run says so at
 * start (test/support/reference-setup.ts); the checks against our own contract still run.
 *
 * Both documents need light normalisation before a JSON Schema 2020-12 validator accepts them:
 * - OpenAI still writes 3.0-style `nullable: true` in places; it becomes a `null` alternative.
 * - Anthropic's Stainless spec lists every response field as `required`, even those with a
 *   `default` that the real API omits (`container`, `stop_details`, `citations`, `caller`, ...).
 *   A required property whose schema carries a `default` is treated as optional, so the recorded
 *   real transcripts validate.
 * - Vendor keywords (`x-*`), `discriminator` and examples are stripped.
 *
 * Our own extensions (`switchyard` fields, `fallback` blocks) are not in these schemas; use
 * `withoutSwitchyardExtensions` before validating a value that carries them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import { REFERENCE_DIR, REFERENCE_PRESENT } from '../../tools/reference.js';

export type Vendor = 'openai' | 'anthropic';

const FILES: Record<Vendor, string> = {
  openai: 'openai-openapi.yaml',
  anthropic: 'anthropic-openapi.json',
};

let ajv: Ajv2020 | undefined;
const loaded = new Set<Vendor>();
const compiled = new Map<string, ValidateFunction>();

/** Errors of `value` against `#/components/schemas/<schemaName>` of the vendor's spec ([] = valid, or no reference folder). */
export function validateOfficial(vendor: Vendor, schemaName: string, value: unknown): string[] {
  if (!REFERENCE_PRESENT) return [];
  const key = `${vendor}:${schemaName}`;
  let validate = compiled.get(key);
  if (!validate) {
    const v = load(vendor);
    validate = v.compile({ $ref: `${vendor}#/components/schemas/${schemaName}` });
    compiled.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/**
 * A copy of a chat/messages body or frame without the gateway's extensions: the top-level
 * `switchyard` field and `fallback` content blocks. Returns undefined for a frame that is
 * nothing but an extension (a `fallback` content_block_start).
 */
export function withoutSwitchyardExtensions<T>(value: T): T | undefined {
  if (value === null || typeof value !== 'object') return value;
  const v = structuredClone(value) as Record<string, unknown>;
  delete v.switchyard;
  const block = v.content_block as { type?: string } | undefined;
  if (block?.type === 'fallback') return undefined;
  if (Array.isArray(v.content)) v.content = v.content.filter((b: { type?: string }) => b?.type !== 'fallback');
  return v as T;
}

function load(vendor: Vendor): Ajv2020 {
  ajv ??= new Ajv2020({ strict: false, allErrors: true, validateFormats: false, logger: false });
  if (!loaded.has(vendor)) {
    const text = readFileSync(path.join(REFERENCE_DIR, FILES[vendor]), 'utf8');
    const doc = (vendor === 'openai' ? parseYaml(text) : JSON.parse(text)) as { components: unknown };
    ajv.addSchema({ $id: vendor, components: normalise(doc.components) });
    loaded.add(vendor);
  }
  return ajv;
}

const DROP = new Set(['discriminator', 'example', 'examples', 'description', 'title']);

function normalise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalise);
  if (node === null || typeof node !== 'object') return node;
  const src = node as Record<string, unknown>;
  let out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(src)) {
    if (k.startsWith('x-') || DROP.has(k)) continue;
    // `properties` maps names to schemas: keep every name, even `description`-like ones.
    out[k] = k === 'properties' ? normaliseMap(val) : normalise(val);
  }
  if (Array.isArray(out.required) && out.properties && typeof out.properties === 'object') {
    const props = src.properties as Record<string, Record<string, unknown>>;
    out.required = (out.required as string[]).filter((name) => !(props[name] && 'default' in props[name]));
  }
  if (out.nullable === true) out = makeNullable(out);
  delete out.nullable;
  return out;
}

function normaliseMap(map: unknown): unknown {
  if (map === null || typeof map !== 'object') return map;
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, normalise(v)]));
}

function makeNullable(s: Record<string, unknown>): Record<string, unknown> {
  const { nullable: _n, ...rest } = s;
  if (typeof rest.type === 'string' && !rest.allOf && !rest.anyOf && !rest.oneOf && !rest.$ref) {
    const enumPart = Array.isArray(rest.enum) ? { enum: [...rest.enum, null] } : {};
    return { ...rest, type: [rest.type, 'null'], ...enumPart };
  }
  return { anyOf: [rest, { type: 'null' }] };
}
