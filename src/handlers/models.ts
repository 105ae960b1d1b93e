import { GatewayError } from '../ir/index.js';
import { findModel, mayUse, type Catalog, type ModelEntry } from '../routing/index.js';
import { MONEY_UNIT, rateAsNanos } from './json-money.js';
import type { HandlerInput, HandlerResult } from './types.js';

/** GET /v1/models: OpenAI's list shape, or Anthropic's when the caller sends `anthropic-version`. */
export function listModels(catalog: Catalog, input: HandlerInput): HandlerResult {
  // A key restricted to some models sees only those, hidden ones included when named for it.
  const allowed = input.auth?.allowedModels;
  const models = listed([...catalog.models.values()].filter((m) => (allowed ? allowed.has(m.id) : !m.hidden)));
  if (wantsAnthropicShape(input)) {
    const { page, hasMore } = pageOf(models, input.query);
    const data = page.map((m) => ({ ...anthropicEntry(m), ...extras(m) }));
    return {
      kind: 'json',
      status: 200,
      body: { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null },
    };
  }
  return { kind: 'json', status: 200, body: { object: 'list', data: models.map((m) => ({ ...openaiEntry(m), ...extras(m) })) } };
}

/** A model as listed: under its id, or under one of its aliases (`aliasOf` then names the model). */
type Listed = ModelEntry & { aliasOf?: string };

/**
 * Each model, then each of its aliases as an entry of its own with the model's facts and
 * `alias_of`: clients that pick from the list (Claude Code's gateway model discovery) can pick an
 * alias, as they can send one.
 */
function listed(models: ModelEntry[]): Listed[] {
  return models.flatMap((m) => [m, ...m.aliases.map((alias): Listed => ({ ...m, id: alias, aliasOf: m.id }))]);
}

/** Anthropic's default page size for GET /v1/models. */
const DEFAULT_PAGE = 20;

/**
 * Anthropic's paging, in catalog order: `limit` models after `after_id`, or the `limit` models just
 * before `before_id`; `has_more` says whether more lie further in that direction.
 */
function pageOf(models: Listed[], query: HandlerInput['query']): { page: Listed[]; hasMore: boolean } {
  const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
  const { after_id: after, before_id: before } = query;
  if (after !== undefined && before !== undefined) throw new GatewayError('invalid_request', 'send after_id or before_id, not both', { param: 'before_id' });
  const indexOf = (id: unknown, param: string) => {
    const i = models.findIndex((m) => m.id === id);
    if (i < 0) throw new GatewayError('invalid_request', `${param}: model ${JSON.stringify(id)} is not in the list`, { param });
    return i;
  };
  if (before !== undefined) {
    const end = indexOf(before, 'before_id');
    const start = Math.max(0, end - limit);
    return { page: models.slice(start, end), hasMore: start > 0 };
  }
  const start = after === undefined ? 0 : indexOf(after, 'after_id') + 1;
  return { page: models.slice(start, start + limit), hasMore: start + limit < models.length };
}

/** GET /v1/models/{model_id}. */
export function getModel(catalog: Catalog, input: HandlerInput): HandlerResult {
  const found = findModel(catalog, input.params.model_id);
  // A model the key may not use is as absent as an unknown one, as OpenAI answers.
  const m = found && mayUse(input.auth?.allowedModels, found.id) ? found : undefined;
  // Errors take the caller's shape: the route picks Anthropic's when `anthropic-version` is sent.
  if (!m) throw new GatewayError('not_found', `model "${input.params.model_id}" is not in the catalog`, { param: 'model_id', code: 'model_not_found' });
  const entry = wantsAnthropicShape(input) ? anthropicEntry(m) : openaiEntry(m);
  return { kind: 'json', status: 200, body: { ...entry, ...extras(m) } };
}

function wantsAnthropicShape(input: HandlerInput): boolean {
  return input.headers['anthropic-version'] !== undefined;
}

function openaiEntry(m: ModelEntry) {
  return { id: m.id, object: 'model', created: m.created, owned_by: m.deployments[0].provider.id };
}

function anthropicEntry(m: ModelEntry) {
  return { type: 'model', id: m.id, display_name: m.displayName, created_at: new Date(m.created * 1000).toISOString() };
}

function extras(m: Listed) {
  return {
    ...(m.aliasOf !== undefined ? { alias_of: m.aliasOf } : {}),
    pricing: {
      input: rateAsNanos(m.price.input),
      output: rateAsNanos(m.price.output),
      cache_read: rateAsNanos(m.price.cacheRead),
      cache_write: rateAsNanos(m.price.cacheWrite),
      cache_write_1h: rateAsNanos(m.price.cacheWrite1h),
      unit: `${MONEY_UNIT} per token`,
    },
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    capabilities: m.capabilities,
    fast_variant: m.fast ? (m.fast.model ?? `${m.id} (${Object.entries(m.fast.options ?? {}).map(([k, v]) => `${k} ${String(v)}`).join(', ')})`) : null,
    provider: m.deployments[0].provider.type,
  };
}
