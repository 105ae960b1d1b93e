/**
 * Valid requests for each operation of the document: path, query and header parameters plus a
 * body from the operation's schema, with overrides that make them realistic enough to reach the
 * pipeline (catalog model ids, small output ceilings, data-URL images) and real credentials.
 */
import fc from 'fast-check';
import type { Contract, Operation, Schema } from './load-contract.js';
import { schemaArbitrary, type ArbitraryOptions, type SchemaPath } from './schema-arbitrary.js';

export interface FuzzRequest {
  operationId: string;
  method: string;
  /** Concrete path with query string. */
  path: string;
  headers: Record<string, string>;
  /** JSON body (serialized unless `raw` is set). */
  body?: unknown;
  /** Exact bytes to send instead of the JSON body (encodings, malformed JSON, big bodies). */
  raw?: string | Uint8Array;
  /** What produced it: `valid` or the mutation's name. */
  kind: string;
  /** Statuses the mutation must produce (any documented status when absent). */
  expect?: number[];
}

export interface FuzzContext {
  contract: Contract;
  /** Catalog model ids (and aliases) requests should name. */
  models: string[];
  clientKey: string;
  adminKey: string;
  /** Accounts and keys the admin operations may touch (never the client account). */
  accountIds: string[];
  keyIds: string[];
}

export type AuthKind = 'client' | 'admin' | 'none';

/** The admin key's scheme; every other scheme takes the client key. */
const ADMIN_SCHEME = 'AdminBearer';

export function authKind(op: Operation): AuthKind {
  if (op.credentials.length === 0) return 'none';
  return op.credentials.some((c) => c.scheme === ADMIN_SCHEME) ? 'admin' : 'client';
}

/** The header names any of the operation's credentials travel in. */
export function credentialHeaders(op: Operation): Set<string> {
  return new Set(op.credentials.map((c) => c.header));
}

const OUTPUT_CEILINGS = new Set(['max_tokens', 'max_completion_tokens', 'max_output_tokens']);
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** Realistic values where the schema alone would almost never reach the pipeline. */
export function requestOverrides(ctx: FuzzContext): Pick<ArbitraryOptions, 'override' | 'forced'> {
  const model = fc.oneof({ weight: 19, arbitrary: fc.constantFrom(...ctx.models) }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) });
  return {
    override(path: SchemaPath, _schema: Schema) {
      const last = path[path.length - 1];
      if (path.length === 1 && last === 'model') return model;
      if (path.length === 1 && last && OUTPUT_CEILINGS.has(last)) return fc.integer({ min: 1, max: 40 });
      if (path.length === 1 && last === 'stream') return fc.boolean();
      if (last === 'budget_tokens') return fc.integer({ min: 1, max: 2048 });
      if (last === 'url') return fc.constantFrom(`data:image/png;base64,${PNG_1PX}`, 'data:image/png;base64,', 'not a url');
      if (last === 'data') return fc.constantFrom(PNG_1PX, '', '!!');
      if (path.length === 1 && last === 'account_id') return fc.constantFrom(...ctx.accountIds);
      return undefined;
    },
    forced(path: SchemaPath) {
      // An output ceiling on every completion keeps each case to a few tokens; the Responses
      // endpoint refuses a request without `input` (no stored conversations to continue).
      return path.length === 0 ? ['max_tokens', 'max_output_tokens', 'input'] : [];
    },
  };
}

export function bodyArbitrary(ctx: FuzzContext, op: Operation): fc.Arbitrary<unknown> {
  if (!op.body) return fc.constant(undefined);
  return schemaArbitrary(op.body, { resolve: ctx.contract.resolve, maxDepth: 7, ...requestOverrides(ctx) });
}

function pathParam(ctx: FuzzContext, name: string): fc.Arbitrary<string> {
  const known = name === 'account_id' ? ctx.accountIds : name === 'key_id' ? ctx.keyIds : name === 'model_id' ? ctx.models : [];
  const other = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('.x.', '%00', 'a/b', ' ', 'x'.repeat(300)));
  return known.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: other }) : other;
}

/** Credentials a well-behaved client sends to this operation: any of its security schemes. */
export function credentials(ctx: FuzzContext, op: Operation): fc.Arbitrary<Record<string, string>> {
  if (op.credentials.length === 0) return fc.constant({});
  return fc.constantFrom(...op.credentials.map((c) => ({ [c.header]: `${c.prefix}${c.scheme === ADMIN_SCHEME ? ctx.adminKey : ctx.clientKey}` })));
}

export function validRequest(ctx: FuzzContext, op: Operation): fc.Arbitrary<FuzzRequest> {
  const params: Record<string, fc.Arbitrary<unknown>> = {};
  const optional: string[] = [];
  for (const p of op.parameters) {
    const key = `${p.in}:${p.name}`;
    params[key] = p.in === 'path' ? pathParam(ctx, p.name) : schemaArbitrary(p.schema, { resolve: ctx.contract.resolve, ...requestOverrides(ctx) }, [p.name]);
    if (!p.required) optional.push(key);
  }
  const paramsArb = Object.keys(params).length ? fc.record(params, { requiredKeys: op.parameters.filter((p) => p.required).map((p) => `${p.in}:${p.name}`) }) : fc.constant({});
  return fc.record({ params: paramsArb, auth: credentials(ctx, op), body: bodyArbitrary(ctx, op) }).map(({ params: values, auth, body }) => {
    let path = op.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = { ...auth };
    for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
      const [where, name] = key.split(':') as [string, string];
      if (where === 'path') path = path.replace(`{${name}}`, pathSegment(String(value)));
      else if (where === 'query') query.set(name, String(value));
      // Only printable ASCII can travel in a header; the rest would fail in the client, not the server.
      else headers[name] = String(value).replace(/[^\x20-\x7e]/g, '');
    }
    if (op.body) headers['content-type'] = 'application/json';
    const qs = query.toString();
    return { operationId: op.operationId, method: op.method, path: qs ? `${path}?${qs}` : path, headers, body, kind: 'valid' };
  });
}

/** True when the request asks for an SSE answer. */
export function wantsStream(req: FuzzRequest): boolean {
  return Boolean(req.body && typeof req.body === 'object' && (req.body as Record<string, unknown>).stream === true);
}

/**
 * A path parameter as one segment. A segment of `.` or `..` cannot be sent at all: URL parsing
 * treats it, escaped as `%2E` or not, as a dot segment and resolves it in the client
 * (`/v1/responses/%2E` becomes `/v1/responses/`), so the request would reach another route; such a
 * value is sent with a `~` after it, still an id no resource has.
 */
function pathSegment(value: string): string {
  return encodeURIComponent(value === '.' || value === '..' ? `${value}~` : value);
}
