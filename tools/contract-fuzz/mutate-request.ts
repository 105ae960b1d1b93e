/**
 * Invalid requests: each mutation takes a valid request and breaks one thing (a field's type, a
 * required field, a bound, the encoding, the content type, the credentials, the JSON itself),
 * stating the statuses it must produce when that is certain.
 */
import fc from 'fast-check';
import { authKind, credentialHeaders, type FuzzContext, type FuzzRequest } from './build-requests.js';
import type { Operation, Schema } from './load-contract.js';
import { typeOf } from './schema-arbitrary.js';

type Mutation = (req: FuzzRequest, pick: number) => FuzzRequest;

const WRONG_VALUES: unknown[] = [null, 0, -1, 1.5, '', 'x', true, [], {}, [[]], { a: {} }];
const BOUNDARY_NUMBERS = [0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, -(2 ** 63), 9.3e18, 1e308, -1e308, 0.5, 1e-9];

export interface SizedLimits {
  /** The server's body limit in bytes (the oversized mutation sends one byte more). */
  bodyLimitBytes: number;
}

function bodyOf(req: FuzzRequest): Record<string, unknown> {
  return req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? { ...(req.body as Record<string, unknown>) } : {};
}

function keyAt<T>(list: T[], pick: number): T | undefined {
  return list.length ? list[pick % list.length] : undefined;
}

function mutations(ctx: FuzzContext, op: Operation, limits: SizedLimits): Record<string, Mutation> {
  const schema = op.body ? ctx.contract.resolve(op.body) : undefined;
  const props = Object.keys((schema?.properties ?? {}) as Record<string, Schema>);
  const required = (schema?.required ?? []) as string[];
  const auth = authKind(op);
  const out: Record<string, Mutation> = {};
  if (auth !== 'none') {
    const headers = credentialHeaders(op);
    const without = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => !headers.has(k)));
    out.noCredentials = (r) => ({ ...r, headers: without(r.headers), expect: [401] });
    out.wrongCredentials = (r, pick) => {
      const bad = keyAt([`Bearer sk-wrong-${pick}`, 'Bearer ', 'Basic dXNlcjpwYXNz', `Bearer ${auth === 'admin' ? ctx.clientKey : ctx.adminKey}`, 'bearer', `Token ${ctx.clientKey}`], pick)!;
      return { ...r, headers: { ...without(r.headers), authorization: bad }, expect: [401] };
    };
  }
  // Only an operation that declares the header with its date pattern must refuse a bad value.
  const declared = op.parameters.some((p) => p.name === 'anthropic-version' && p.schema.pattern);
  out.badVersionHeader = (r, pick) => ({ ...r, headers: { ...r.headers, 'anthropic-version': keyAt(['2023-6-1', 'latest', ' ', '2023-06-01T00:00'], pick)! }, expect: declared ? [400] : undefined });
  if (!op.body) return out;
  // A body with no required field (a PATCH) has nothing to drop.
  if (required.length) {
    out.dropRequired = (r, pick) => {
      const body = bodyOf(r);
      delete body[keyAt(required, pick)!];
      return { ...r, body, expect: [400] };
    };
  }
  out.wrongType = (r, pick) => {
    const body = bodyOf(r);
    const key = keyAt(props, pick)!;
    const sub = ctx.contract.resolve((schema!.properties as Record<string, Schema>)[key]);
    const wrong = WRONG_VALUES.filter((v) => !sameType(sub, v));
    body[key] = keyAt(wrong, Math.floor(pick / props.length)) ?? null;
    return { ...r, body };
  };
  out.boundary = (r, pick) => {
    const body = bodyOf(r);
    const numeric = props.filter((k) => ['integer', 'number'].includes(numericType(ctx.contract.resolve((schema!.properties as Record<string, Schema>)[k])) ?? ''));
    const key = keyAt(numeric.length ? numeric : props, pick)!;
    body[key] = keyAt(BOUNDARY_NUMBERS, Math.floor(pick / Math.max(numeric.length, 1)));
    return { ...r, body };
  };
  out.notAnObject = (r, pick) => ({ ...r, body: keyAt([null, [], 'text', 42, [r.body]], pick), expect: [400] });
  out.unknownTag = (r, pick) => {
    const body = bodyOf(r);
    const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : undefined;
    if (list && list.length) {
      const items = structuredClone(list) as Array<Record<string, unknown>>;
      const item = items[pick % items.length];
      if (item && typeof item === 'object') item[pick % 2 ? 'role' : 'type'] = 'bogus';
      body[Array.isArray(body.messages) ? 'messages' : 'input'] = items;
    }
    return { ...r, body };
  };
  out.deeplyNested = (r, pick) => {
    const depth = keyAt([64, 1_000, 20_000], pick)!;
    const nested = pick % 2 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const json = JSON.stringify(bodyOf(r));
    const raw = json === '{}' ? `{"x_deep":${nested}}` : `${json.slice(0, -1)},"x_deep":${nested}}`;
    return { ...r, raw };
  };
  out.oversized = (r) => {
    const json = JSON.stringify(bodyOf(r));
    const pad = 'a'.repeat(limits.bodyLimitBytes + 1 - json.length);
    return { ...r, raw: `${json.slice(0, -1)}${json === '{}' ? '' : ','}"x_pad":"${pad}"}`, expect: [413] };
  };
  out.badEncoding = (r, pick) => {
    const json = Buffer.from(JSON.stringify(bodyOf(r)), 'utf8');
    const variants: Array<() => Uint8Array> = [
      () => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]),
      () => Buffer.from(JSON.stringify(bodyOf(r)), 'utf16le'),
      () => Buffer.concat([json.subarray(0, json.length - 1), Buffer.from(',"x_bad":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]),
    ];
    return { ...r, raw: variants[pick % variants.length]() };
  };
  out.wrongContentType = (r, pick) => {
    const type = keyAt(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', ''], pick)!;
    const headers: Record<string, string | undefined> = { ...r.headers, 'content-type': type };
    if (!type) delete headers['content-type'];
    return { ...r, headers: headers as Record<string, string>, raw: JSON.stringify(r.body ?? {}), expect: [415] };
  };
  out.malformedJson = (r, pick) => {
    const json = JSON.stringify(bodyOf(r));
    // Only texts that really are not JSON: `{}` with its quotes replaced is still `{}`.
    const candidates = [json.slice(0, Math.max(1, json.length - 1 - (pick % 7))), `${json.slice(0, -1)},}`, json.replace(/"/g, "'"), `${json}{`, '{', '\u0000', 'nul'];
    const raw = keyAt(candidates.filter((text) => !parses(text)), pick)!;
    return { ...r, raw, expect: [400] };
  };
  return out;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function numericType(s: Schema): string | undefined {
  const t = typeOf(s);
  if (t) return t;
  for (const b of (s.anyOf ?? s.oneOf ?? []) as Schema[]) if (b.type === 'integer' || b.type === 'number') return b.type;
  return undefined;
}

/** Rough check that `v` fits the schema's type, so wrongType picks values that are actually wrong. */
function sameType(s: Schema, v: unknown): boolean {
  const types = [typeOf(s), ...((s.anyOf ?? s.oneOf ?? []) as Schema[]).map((b) => typeOf(b))].filter(Boolean);
  if (types.length === 0) return true;
  const t = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
  return types.includes(t) || (t === 'integer' && types.includes('number'));
}

export function invalidRequest(ctx: FuzzContext, op: Operation, valid: fc.Arbitrary<FuzzRequest>, limits: SizedLimits): fc.Arbitrary<FuzzRequest> {
  const table = mutations(ctx, op, limits);
  const names = Object.keys(table);
  return fc.tuple(valid, fc.constantFrom(...names), fc.nat({ max: 999 })).map(([req, name, pick]) => ({ ...table[name](req, pick), kind: name }));
}
