import { AJV_OPTIONS, forValidation } from '../../src/http/openapi-document.js';
/**
 * The published document as the fuzzer sees it: operations with their methods, parameters and
 * documented statuses, openapi-backend's response validators (the same compiled AJV the server
 * uses for requests), and validators for component schemas (SSE events are typed only there).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { OpenAPIBackend } from 'openapi-backend';
import { parse as parseYaml } from 'yaml';

export const DOCUMENT_PATH = fileURLToPath(new URL('../../generated/openapi.yaml', import.meta.url));

export type Schema = Record<string, any>;

export interface Parameter {
  name: string;
  in: 'header' | 'query' | 'path';
  required: boolean;
  schema: Schema;
}

/** One security scheme of the document, as the header a client sends. */
export interface Credential {
  scheme: string;
  header: string;
  /** What precedes the key in the header's value (`Bearer ` for an http bearer scheme). */
  prefix: string;
}

export interface Operation {
  operationId: string;
  method: string;
  /** Template path from the document (`/v1/models/{model_id}`). */
  path: string;
  parameters: Parameter[];
  /** Request body schema (application/json), when the operation takes one. */
  body?: Schema;
  bodyRequired: boolean;
  /** Documented status codes. */
  statuses: Set<number>;
  /** The response headers documented for each status (lower case), and whether each is required. */
  headers: Map<number, Map<string, boolean>>;
  /** The credentials the operation takes, any one of them (none: a public operation). */
  credentials: Credential[];
  /** True when a documented 200 offers text/event-stream. */
  streams: boolean;
  /** True when text/event-stream is all a documented 200 offers (the operation streams whatever the body says). */
  onlyStreams: boolean;
  /** Media types a documented 200 offers besides JSON and SSE (the metrics' text/plain, Bedrock's event stream). */
  otherTypes: string[];
}

export interface Contract {
  definition: Record<string, any>;
  operations: Operation[];
  /** Resolves a local `$ref` (`#/components/schemas/X`). */
  resolve(schema: Schema): Schema;
  /** openapi-backend's validator for a JSON body of `status` (empty array = valid). */
  validateBody(operationId: string, status: number, body: unknown): string[];
  /** Errors of `value` against `#/components/schemas/<name>` of our document. */
  validateComponent(name: string, value: unknown): string[];
  /** Request-body validity (the server's own rules), to count how many generated bodies were valid. */
  isValidBody(operationId: string, body: unknown): boolean;
}

export async function loadContract(path = DOCUMENT_PATH): Promise<Contract> {
  const definition = parseYaml(readFileSync(path, 'utf8')) as Record<string, any>;
  const backend = new OpenAPIBackend({
    definition: forValidation(definition) as any,
    strict: true,
    validate: true,
    ajvOpts: AJV_OPTIONS as any,
  });
  await backend.init();
  const ajv = new Ajv({ ...AJV_OPTIONS, strict: false, allErrors: false, validateSchema: false } as any);
  ajv.addSchema({ $id: 'doc', components: forValidation(definition.components) });
  const compiled = new Map<string, ValidateFunction>();
  const resolve = (schema: Schema): Schema => {
    let s = schema;
    while (s && typeof s.$ref === 'string') s = definition.components.schemas[s.$ref.replace('#/components/schemas/', '')];
    return s;
  };
  return {
    definition,
    operations: readOperations(definition),
    resolve,
    validateBody(operationId, status, body) {
      const result = backend.validator.validateResponse(body, operationId, status);
      return (result.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    },
    validateComponent(name, value) {
      let v = compiled.get(name);
      if (!v) compiled.set(name, (v = ajv.compile({ $ref: `doc#/components/schemas/${name}` })));
      if (v(value)) return [];
      return (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    },
    isValidBody(operationId, body) {
      const [bodyValidator] = backend.validator.getRequestValidatorsForOperation(operationId) ?? [];
      return !bodyValidator || Boolean(bodyValidator({ requestBody: body }));
    },
  };
}

function readOperations(definition: Record<string, any>): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(definition.paths as Record<string, any>)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete', 'head']) {
      const op = item[method];
      if (!op?.operationId) continue;
      const ok = op.responses?.['200']?.content ?? {};
      ops.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []).map((p: any) => ({ name: p.name, in: p.in, required: Boolean(p.required), schema: p.schema ?? {} })),
        body: op.requestBody?.content?.['application/json']?.schema,
        bodyRequired: Boolean(op.requestBody?.required),
        credentials: credentialsOf(definition, op.security ?? definition.security ?? []),
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
        headers: documentedHeaders(definition, op.responses ?? {}),
        streams: 'text/event-stream' in ok,
        onlyStreams: Object.keys(ok).length === 1 && 'text/event-stream' in ok,
        otherTypes: Object.keys(ok).filter((t) => t !== 'application/json' && t !== 'text/event-stream'),
      });
    }
  }
  return ops;
}

function documentedHeaders(definition: Record<string, any>, responses: Record<string, any>): Map<number, Map<string, boolean>> {
  const byStatus = new Map<number, Map<string, boolean>>();
  for (const [status, response] of Object.entries(responses)) {
    const headers = new Map<string, boolean>();
    for (const [name, header] of Object.entries<any>(response.headers ?? {})) {
      const h = header.$ref ? definition.components.headers[String(header.$ref).split('/').pop()!] : header;
      headers.set(name.toLowerCase(), Boolean(h?.required));
    }
    byStatus.set(Number(status), headers);
  }
  return byStatus;
}

/** The alternatives of an operation's `security` (each one scheme here), as headers. */
function credentialsOf(definition: Record<string, any>, security: Array<Record<string, unknown>>): Credential[] {
  const schemes = definition.components?.securitySchemes ?? {};
  return security.flatMap((alternative) =>
    Object.keys(alternative).map((name): Credential => {
      const s = schemes[name];
      if (s?.type === 'http' && String(s.scheme).toLowerCase() === 'bearer') return { scheme: name, header: 'authorization', prefix: 'Bearer ' };
      if (s?.type === 'apiKey' && s.in === 'header') return { scheme: name, header: String(s.name).toLowerCase(), prefix: '' };
      throw new Error(`contract-fuzz: unsupported security scheme ${name}`);
    }),
  );
}
