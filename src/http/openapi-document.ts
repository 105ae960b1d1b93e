import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenAPIBackend } from 'openapi-backend';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { GatewayError } from '../ir/index.js';

/**
 * AJV options for the published document, shared by the server, the spec tests and the contract
 * fuzzer. TypeSpec emits OpenAPI numeric formats (int32, int64, double, float); the integer
 * bounds are in the schemas, so the formats are accepted as annotations instead of warned about.
 */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export const AJV_OPTIONS = {
  discriminator: true,
  formats: {
    uri: true,
    int32: true,
    int64: true,
    float: true,
    double: true,
    // RFC 3339 (`2026-11-26T20:00:00Z`, an offset or Z required), and a real instant.
    'date-time': (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)),
  },
} as const;

/**
 * The copy of the published document handed to a validator. AJV's `discriminator: true` refuses
 * `discriminator.mapping` (it derives the mapping from each branch's tag), while generators need it
 * (without it openapi-typescript and @hey-api type every tag as the schema's name): the published
 * document keeps it, and only this copy loses it.
 */
export function forValidation<T>(definition: T): T {
  const copy = structuredClone(definition);
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(strip);
    if (node === null || typeof node !== 'object') return;
    const object = node as Record<string, unknown>;
    const discriminator = object.discriminator as Record<string, unknown> | undefined;
    if (discriminator && typeof discriminator === 'object') delete discriminator.mapping;
    Object.values(object).forEach(strip);
  };
  strip(copy);
  return copy;
}

export const DOCUMENT_PATH = fileURLToPath(new URL('../../generated/openapi.yaml', import.meta.url));

export interface OperationRoute {
  operationId: string;
  method: string;
  /** Koa router path (`/v1/models/:model_id`). */
  path: string;
}

export interface ValidationInput {
  body: unknown;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
}

/** An OpenAPI path as @koa/router's (path-to-regexp 8): `{name}` is `:name`, a literal `:` escaped (Vertex's `{model}:rawPredict`). */
export function routerPath(path: string): string {
  return path.replace(/:/g, '\\:').replace(/\{([^}]+)\}/g, ':$1');
}

const paramCount = (routerPath: string) => routerPath.match(/(?<!\\):[A-Za-z_]/g)?.length ?? 0;

/**
 * The published document, with openapi-backend's compiled AJV validators. Routing is done by
 * @koa/router from the same document; openapi-backend's own `handleRequest` costs half the
 * throughput (stack notes §4), while its compiled validators called directly cost little.
 * An operation's validators are compiled at its first request: compiling all of them took two
 * seconds of CPU at every start, a quarter of the gateway's start (spec/spec.test.ts compiles them all).
 */
export class ApiDocument {
  readonly routes: OperationRoute[];
  private validators = new Map<string, Array<ValidateFunction | undefined>>();
  /** The query parameters each operation declares; others are ignored, as the providers' APIs do. */
  private queryParams = new Map<string, ReadonlySet<string>>();

  private constructor(
    readonly definition: Record<string, any>,
    private readonly backend: OpenAPIBackend,
  ) {
    this.routes = [];
    for (const [path, item] of Object.entries(definition.paths as Record<string, any>)) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete', 'head']) {
        const op = item[method];
        if (!op?.operationId) continue;
        this.routes.push({ operationId: op.operationId, method, path: routerPath(path) });
        const params: Array<{ in?: string; name?: string }> = [...(item.parameters ?? []), ...(op.parameters ?? [])];
        this.queryParams.set(op.operationId, new Set(params.filter((p) => p.in === 'query').map((p) => String(p.name))));
      }
    }
    // A path with fewer parameters first, so a literal segment wins over a parameter in its place
    // (Vertex's `models/count-tokens:rawPredict` over `models/{model}:rawPredict`).
    this.routes.sort((a, b) => paramCount(a.path) - paramCount(b.path));
  }

  /** The operation's [body, parameters] validators, compiled at first use. */
  private validatorsFor(operationId: string): Array<ValidateFunction | undefined> {
    let validators = this.validators.get(operationId);
    if (!validators) {
      const compiled = this.backend.validator.getRequestValidatorsForOperation(operationId) ?? [];
      // openapi-backend leaves the body validator out (not undefined) when there is no requestBody.
      validators = this.backend.getOperation(operationId)?.requestBody ? compiled : [undefined, ...compiled];
      this.validators.set(operationId, validators);
    }
    return validators;
  }

  static async load(path = DOCUMENT_PATH): Promise<ApiDocument> {
    // The build writes the document as JSON beside the YAML too: JSON.parse reads it in
    // milliseconds, where parsing 680 kB of YAML took over a second of CPU at every start.
    const json = path.replace(/\.yaml$/, '.json');
    const definition = json !== path && existsSync(json) ? JSON.parse(readFileSync(json, 'utf8')) : parseYaml(readFileSync(path, 'utf8'));
    const backend = new OpenAPIBackend({
      definition: forValidation(definition),
      strict: true,
      validate: true,
      // `quick`: skip re-validating the document (spec/spec.test.ts does that in strict mode) and
      // compile validators on demand: an operation's request validators at its first request,
      // response validators, which the server never uses, never.
      quick: true,
      ajvOpts: AJV_OPTIONS as any,
    });
    await backend.init();
    return new ApiDocument(definition, backend);
  }

  /** Validates a request; throws a GatewayError naming the field at fault. */
  validate(operationId: string, input: ValidationInput): void {
    const [bodyValidator, paramValidator] = this.validatorsFor(operationId);
    const errors: ErrorObject[] = [];
    const query = this.declaredQuery(operationId, input.query);
    if (paramValidator && !paramValidator({ path: input.params, query, header: input.headers })) {
      errors.push(...(paramValidator.errors ?? []));
    }
    if (errors.length === 0 && bodyValidator && !bodyValidator({ requestBody: input.body })) {
      errors.push(...(bodyValidator.errors ?? []));
    }
    if (errors.length > 0) throw schemaError(errors);
  }

  private declaredQuery(operationId: string, query: Record<string, unknown>): Record<string, unknown> {
    const declared = this.queryParams.get(operationId);
    const keys = Object.keys(query);
    if (keys.every((k) => declared?.has(k))) return query;
    return Object.fromEntries(keys.filter((k) => declared?.has(k)).map((k) => [k, query[k]]));
  }
}

/** Picks the most specific AJV error and names its field (`messages[0].content`). */
export function schemaError(errors: ErrorObject[]): GatewayError {
  const ranked = [...errors].sort((a, b) => score(b) - score(a));
  const e = ranked[0];
  let path = e.instancePath.replace(/^\/(requestBody|header|query|path)/, '');
  if (e.keyword === 'required') path += `/${(e.params as any).missingProperty}`;
  // A discriminated union's tag outside its mapping: name the tag, not the whole object.
  if (e.keyword === 'discriminator') path += `/${(e.params as any).tag}`;
  if (e.keyword === 'additionalProperties') path += `/${(e.params as any).additionalProperty}`;
  const param = pointerToParam(path);
  const where = param || 'body';
  let message = `${where}: ${e.message ?? 'is invalid'}`;
  if (e.keyword === 'required') message = `${where}: is required`;
  // A closed object (`additionalProperties: false`) names the field it does not take.
  if (e.keyword === 'additionalProperties') message = `${where}: is not a field of this request`;
  const alternatives = branchMessages(errors, e);
  if (alternatives.length > 1) message = `${where}: ${alternatives.join(' or ')}`;
  if (e.keyword === 'discriminator') {
    const tagValue = (e.params as any).tagValue;
    message = tagValue === undefined ? `${where}: is required` : `${where}: ${JSON.stringify(tagValue)} is not accepted here`;
  }
  if (e.keyword === 'enum') message += ` (${((e.params as any).allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`;
  if (e.instancePath === '/requestBody' && e.keyword === 'type') message = 'the request body must be a JSON object';
  return new GatewayError('invalid_request', message, { param: param || undefined });
}

/**
 * When the value itself (not something inside it) fails every branch of an anyOf, each branch's
 * complaint is one way to be right: `amount: must be >= 1 or must be <= -1`, not only the first.
 */
function branchMessages(errors: ErrorObject[], chosen: ErrorObject): string[] {
  const alternation = errors.some((x) => x.keyword === 'anyOf' && x.instancePath === chosen.instancePath);
  if (!alternation || chosen.keyword === 'required' || chosen.keyword === 'additionalProperties') return [];
  const here = errors.filter((x) => x.instancePath === chosen.instancePath && x.keyword !== 'anyOf' && x.keyword !== 'oneOf');
  return [...new Set(here.map((x) => x.message ?? 'is invalid'))];
}

function score(e: ErrorObject): number {
  const depth = e.instancePath.split('/').length * 10;
  const vague = e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if' ? -5 : 0;
  return depth + vague + (e.keyword === 'required' ? 10 : 0);
}

function pointerToParam(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}
