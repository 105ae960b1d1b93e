/**
 * Rewrites TypeSpec's OpenAPI 3.1 output into a form that openapi-backend 5.21
 * (draft-07 AJV, strict document check) and the SDK generators all accept.
 * See shared/notes/stack-notes.md §2 (P3, P4, P5, P23).
 *
 *   node --import tsx tools/normalize-openapi.ts <in.yaml> <out.yaml>
 *
 * `discriminator.mapping` is kept: without it generators type each variant's tag as the schema
 * *name* (`role: "ChatAssistantMessage"`). The validator's copy drops it (forValidation in
 * src/http/openapi-document.ts), since AJV refuses it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse, stringify } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const COMPOSITION = ['allOf', 'anyOf', 'oneOf'] as const;

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `unevaluatedProperties` is rejected by openapi-backend's 3.1 check and drops TS index signatures. */
function rewriteUnevaluated(node: JsonObject): void {
  if (!('unevaluatedProperties' in node)) return;
  if (COMPOSITION.some((k) => k in node) || 'additionalProperties' in node) {
    // additionalProperties does not see through composition; a silent rewrite would change meaning.
    throw new Error('normalize-openapi: unevaluatedProperties next to composition/additionalProperties is unsupported');
  }
  node.additionalProperties = node.unevaluatedProperties;
  delete node.unevaluatedProperties;
}

/**
 * A closed model (`seal-object-schemas`, or `...Record<never>`) is emitted as `{not: {}}`, which
 * means the same as `false` to a validator; generators read only `false` as closed (openapi-typescript-codegen
 * types `{not: {}}` as `Record<string, any>`).
 */
function rewriteClosed(node: JsonObject): void {
  const extra = node.additionalProperties;
  if (isObject(extra) && Object.keys(extra).length === 1 && isObject(extra.not) && Object.keys(extra.not).length === 0) {
    node.additionalProperties = false;
  }
}

/** 3.0-style `nullable` (AJV: "nullable cannot be used without type") and 3.1 `type: [x, "null"]`. */
function rewriteNullable(node: JsonObject): void {
  if (node.nullable === true) {
    delete node.nullable;
    if (Array.isArray(node.anyOf)) {
      node.anyOf.push({ enum: [null] });
    } else {
      const inner: JsonObject = { ...node };
      for (const key of Object.keys(node)) delete node[key];
      node.anyOf = [inner, { enum: [null] }];
    }
  } else if ('nullable' in node) {
    delete node.nullable;
  }
  if (Array.isArray(node.type)) {
    const types = node.type.filter((t): t is string => typeof t === 'string');
    const nonNull = types.filter((t) => t !== 'null');
    if (nonNull.length === types.length && nonNull.length === 1) {
      node.type = nonNull[0];
      return;
    }
    const inner: JsonObject = { ...node, type: nonNull.length === 1 ? nonNull[0] : nonNull };
    for (const key of Object.keys(node)) delete node[key];
    node.anyOf = nonNull.length === types.length ? [inner] : [inner, { enum: [null] }];
  }
}

/**
 * openapi-backend splits any `explode: false` query value on commas, turning `limit=10`
 * into `["10"]` ("must be integer"). For scalars `explode` means nothing, so drop it.
 */
function rewriteScalarExplode(node: JsonObject): void {
  if (typeof node.in !== 'string' || !('explode' in node) || !isObject(node.schema)) return;
  if (node.schema.type !== 'array') delete node.explode;
}

function walk(node: Json): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item);
    return;
  }
  if (!isObject(node)) return;
  rewriteUnevaluated(node);
  rewriteClosed(node);
  rewriteNullable(node);
  rewriteScalarExplode(node);
  for (const value of Object.values(node)) walk(value);
}

/**
 * TypeSpec writes a response header inline on every status of every operation (each error status
 * repeats the same eight): the same header is written once in `components.headers` and referenced,
 * which changes nothing for a reader and keeps the document a third of the size.
 */
function shareHeaders(document: JsonObject): void {
  const shared: JsonObject = {};
  const keyOf = new Map<string, string>();
  for (const item of Object.values(isObject(document.paths) ? document.paths : {})) {
    for (const op of Object.values(isObject(item) ? item : {})) {
      if (!isObject(op) || !isObject(op.responses)) continue;
      for (const response of Object.values(op.responses)) {
        if (!isObject(response) || !isObject(response.headers)) continue;
        for (const [name, header] of Object.entries(response.headers)) {
          if (!isObject(header) || '$ref' in header) continue;
          const text = `${name} ${JSON.stringify(header)}`;
          let key = keyOf.get(text);
          if (!key) {
            key = name;
            for (let n = 2; key in shared; n++) key = `${name}-${n}`;
            keyOf.set(text, key);
            shared[key] = header;
          }
          response.headers[name] = { $ref: `#/components/headers/${key}` };
        }
      }
    }
  }
  if (Object.keys(shared).length === 0) return;
  if (!isObject(document.components)) document.components = {};
  (document.components as JsonObject).headers = shared;
}

/** Returns a normalized deep copy; the input is not modified. */
export function normalizeOpenApi<T>(document: T): T {
  const copy = structuredClone(document) as Json;
  walk(copy);
  if (isObject(copy)) shareHeaders(copy);
  return copy as T;
}

/** Stable YAML text: no line folding, so the output only changes when the spec does. */
export function renderYaml(document: unknown): string {
  return stringify(document, { lineWidth: 0, aliasDuplicateObjects: false });
}

function main(argv: string[]): void {
  const [input, output] = argv;
  if (!input || !output) {
    process.stderr.write('usage: normalize-openapi <in.yaml> <out.yaml>\n');
    process.exit(2);
  }
  const document = parse(readFileSync(input, 'utf8')) as unknown;
  writeFileSync(output, renderYaml(normalizeOpenApi(document)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2));
}
