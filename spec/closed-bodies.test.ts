// Which bodies the document closes (additionalProperties: false) and which it leaves open: the rule
// of spec/DECISIONS.md ("Closed and open bodies"), checked over every operation, so an operation
// added later follows it or fails here.
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIBackend } from 'openapi-backend';
import { check, loadApi, readDocument } from './load-api.js';

type Schema = Record<string, any>;
const doc = readDocument();
const PROTOCOL_TAGS = new Set(['Chat', 'Messages', 'Responses']);

function resolve(schema: Schema): Schema {
  const ref = schema.$ref as string | undefined;
  return ref ? doc.components.schemas[ref.replace('#/components/schemas/', '')] : schema;
}

/** Every object schema with declared properties reachable from `root`, named by where it was met. */
function objectsUnder(root: Schema, where: string): Array<[string, Schema]> {
  const found: Array<[string, Schema]> = [];
  const seen = new Set<Schema>();
  const visit = (node: Schema | undefined, at: string): void => {
    if (!node || typeof node !== 'object') return;
    const name = node.$ref ? String(node.$ref).split('/').pop()! : at;
    const schema = resolve(node);
    if (seen.has(schema)) return;
    seen.add(schema);
    if (schema.properties) found.push([name, schema]);
    for (const [key, child] of Object.entries<Schema>(schema.properties ?? {})) visit(child, `${name}.${key}`);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const child of schema[key] ?? []) visit(child, name);
    visit(schema.items, `${name}[]`);
    if (typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, `${name}{}`);
  };
  visit(root, where);
  return found;
}

interface Operation {
  id: string;
  protocol: boolean;
  requestBody?: Schema;
  success: Schema[];
}

function operations(): Operation[] {
  const ops: Operation[] = [];
  for (const item of Object.values<Schema>(doc.paths)) {
    for (const op of Object.values<Schema>(item)) {
      if (!op?.operationId) continue;
      const json = (content: Schema | undefined) => content?.['application/json']?.schema as Schema | undefined;
      const success = Object.entries<Schema>(op.responses)
        .filter(([status]) => status.startsWith('2'))
        .flatMap(([, r]) => Object.values<Schema>(r.content ?? {}).map((c) => c.schema as Schema));
      ops.push({ id: op.operationId, protocol: (op.tags as string[]).some((t) => PROTOCOL_TAGS.has(t)), requestBody: json(op.requestBody?.content), success });
    }
  }
  return ops;
}

describe("the gateway's own bodies are closed", () => {
  const own = operations().filter((op) => !op.protocol);
  it.each(own.map((op) => [op.id, op] as const))('%s: request and success bodies', (_id, op) => {
    const roots = [...(op.requestBody ? [op.requestBody] : []), ...op.success];
    const open = roots
      .flatMap((root) => objectsUnder(root, op.id))
      .filter(([, schema]) => schema.additionalProperties !== false)
      .map(([name]) => name);
    expect(open).toEqual([]);
  });
});

describe("the providers' protocol requests stay open", () => {
  const protocol = operations().filter((op) => op.protocol && op.requestBody);
  it.each(protocol.map((op) => [op.id, op] as const))('%s: every object of the request body', (_id, op) => {
    const closed = objectsUnder(op.requestBody!, op.id)
      .filter(([, schema]) => schema.additionalProperties === false)
      .map(([name]) => name);
    expect(closed).toEqual([]);
  });
});

describe('what the validator does with an unknown field', () => {
  let api: OpenAPIBackend;
  beforeAll(async () => {
    api = await loadApi();
  });

  it('refuses it in an admin body', () => {
    const errors = check(api, { path: '/admin/accounts', body: { name: 'a', balanse: 5 } });
    expect(errors.map((e) => e.message)).toContain('must NOT have additional properties');
  });

  it('takes it anywhere in a protocol body (tool choice, thinking, fallbacks)', () => {
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi', x_extra: 1 }],
      tools: [{ type: 'function', function: { name: 'f', parameters: {}, x_extra: 1 } }],
      tool_choice: { type: 'function', function: { name: 'f', x_extra: 1 }, x_extra: 1 },
      thinking: { type: 'enabled', budget_tokens: 1024, x_extra: 1 },
      fallbacks: [{ model: 'n', x_extra: 1 }],
      x_extra: 1,
    };
    expect(check(api, { path: '/v1/chat/completions', body })).toEqual([]);
  });
});
