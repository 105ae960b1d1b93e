/**
 * Helpers for the billing tests that go through HTTP: the exact hold of a request (the same pure
 * functions the pipeline calls), response checks against generated/openapi.yaml, and SSE reading.
 */
import type { OpenAPIBackend } from 'openapi-backend';
import { loadApi } from '../../spec/load-api.js';
import { requestHold } from '../../src/ledger/index.js';
import { providers } from '../../src/providers/registry.js';
import { capabilitiesOf } from '../../src/providers/capabilities.js';
import type { ProtocolAdapter } from '../../src/protocols/types.js';
import { planRoute } from '../../src/routing/index.js';
import type { Catalog } from '../../src/routing/catalog.js';
import { countRequestTokens } from '../../src/util/tokenizer.js';
import { localCatalog, M, setModelPrice } from '../support/gateway.js';

/** The hold the gateway places for this body on this protocol, and its input token count. */
export function holdFor(catalog: Catalog, protocol: ProtocolAdapter<any>, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const req = protocol.decodeRequest(body, headers);
  const inputTokens = countRequestTokens(req);
  // As the pipeline holds: each candidate's prompt with its provider's tokenizer margin, and what the request asks for beyond tokens.
  const candidates = planRoute(catalog, req).map((c) => ({ ...c, inputMargin: capabilitiesOf(providers, c.target).tokenizerMargin }));
  return { hold: requestHold(inputTokens, candidates, req.billing), inputTokens };
}

let api: Promise<OpenAPIBackend> | undefined;

/**
 * Errors of a response body against the operation's schema in the published document, plus
 * every property the handler sends that the schema does not declare (the document has no
 * additionalProperties: false, so AJV alone would let an undocumented field through).
 */
export async function responseProblems(operationId: string, status: number, body: unknown): Promise<string[]> {
  const backend = await (api ??= loadApi());
  const errors = (backend.validateResponse(body, operationId, status).errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  const op = backend.getOperation(operationId) as any;
  const schema = op?.responses?.[String(status)]?.content?.['application/json']?.schema;
  if (!schema) return [...errors, `no ${status} schema for ${operationId}`];
  return [...errors, ...undeclared(schema, body, '')];
}

function undeclared(schema: any, value: unknown, at: string): string[] {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const results = (branches as any[]).map((b) => undeclared(b, value, at));
    return results.find((r) => r.length === 0) ?? results[0];
  }
  if (Array.isArray(value) && schema.items) return value.flatMap((v, i) => undeclared(schema.items, v, `${at}/${i}`));
  if (value === null || typeof value !== 'object' || !schema.properties) return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    k in schema.properties ? undeclared(schema.properties[k], v, `${at}/${k}`) : [`${at}/${k} is not in the schema`],
  );
}

/** Parsed `data:` payloads of an SSE text (without `[DONE]`). */
export function ssePayloads(text: string): any[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .filter((d) => d && d !== '[DONE]')
    .map((d) => JSON.parse(d));
}

/** Polls `probe` until it returns a value that is not undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A catalog file (for gateway processes) with `local-haiku` priced as exactCostCatalog prices it:
 * a request capped at max_tokens costs exactly its hold. `more` is YAML of further models.
 */
export function exactCostConfig(more = ''): string {
  return `
providers:
  local: { type: local }
models:
  - id: local-haiku
    provider: local
    upstream_model: local-haiku
    price: { input: 1, output: 5, cache_read: 0.1, cache_write: 1 }
    max_output_tokens: 32000
    tokens_per_second: 0
${more}`;
}

/**
 * The built-in catalog at rate 0, with a price for `model` whose worst case is exactly what a
 * capped request costs (so a hold and its settle can be compared to the unit).
 */
export function exactCostCatalog(model: string): Catalog {
  const catalog = localCatalog(0);
  // $1 and $5 per million; every cache write at the input price, so the worst case is input x prompt.
  setModelPrice(catalog, model, { input: M, output: 5n * M, cacheRead: M / 10n, cacheWrite: M, cacheWrite1h: M });
  return catalog;
}
