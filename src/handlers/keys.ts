import { GatewayError } from '../ir/index.js';
import type { KeyBudget, KeySettings, Ledger } from '../ledger/index.js';
import { toJsonNumber } from './json-money.js';
import { catalogModelIds, type Catalog } from '../routing/index.js';
import type { HandlerInput, HandlerResult } from './types.js';
import { recordChange } from './audit.js';

type KeyRecord = Awaited<ReturnType<Ledger['listKeys']>>[number];

export function keyBody(k: KeyRecord) {
  return {
    id: k.id,
    account_id: k.accountId,
    name: k.name ?? null,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    revoked_at: k.revokedAt ? k.revokedAt.toISOString() : null,
    rpm_limit: k.rpmLimit,
    tpm_limit: k.tpmLimit,
    allowed_models: k.allowedModels,
    budgets: k.budgets.map((b) => ({ period: b.period, limit: toJsonNumber(b.limit) })),
    budget_time_zone: k.budgetTimeZone,
    expires_at: k.expiresAt ? k.expiresAt.toISOString() : null,
  };
}

interface KeyBody {
  name?: string;
  rpm_limit?: number | null;
  tpm_limit?: number | null;
  allowed_models?: string[] | null;
  budgets?: Array<{ period: KeyBudget['period']; limit: number }> | null;
  budget_time_zone?: string;
  expires_at?: string | null;
}

/**
 * The body's fields as ledger settings: absent stays absent (unchanged), null stays null (no
 * limit, every model). Allowed models must be in the catalog; aliases are stored as their model.
 */
function keySettings(catalog: Catalog, body: KeyBody): KeySettings {
  const allowed = body.allowed_models;
  return {
    name: body.name,
    rpmLimit: body.rpm_limit,
    tpmLimit: body.tpm_limit,
    allowedModels: allowed ? catalogModelIds(catalog, allowed, 'allowed_models') : allowed,
    budgets: body.budgets ? body.budgets.map((b) => ({ period: b.period, limit: BigInt(b.limit) })) : body.budgets,
    budgetTimeZone: body.budget_time_zone,
    expiresAt: typeof body.expires_at === 'string' ? new Date(body.expires_at) : body.expires_at,
  };
}

/** POST /admin/keys: the key itself is in this answer and nowhere else, ever. */
export async function createKey(ledger: Ledger, catalog: Catalog, input: HandlerInput): Promise<HandlerResult> {
  const { key, record } = await ledger.createKey(input.body.account_id, keySettings(catalog, input.body));
  // The key itself never reaches the log: its id and display prefix do.
  await recordChange(ledger, input, { action: 'key.create', targetType: 'key', targetId: record.id, before: null, after: keyBody(record) });
  return { kind: 'json', status: 201, body: { ...keyBody(record), key } };
}

export async function listKeys(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const accountId = typeof input.query.account_id === 'string' ? input.query.account_id : undefined;
  return { kind: 'json', status: 200, body: { data: (await ledger.listKeys(accountId)).map(keyBody) } };
}

/** PATCH /admin/keys/{key_id}: new limits apply to the key's next request. */
export async function updateKey(ledger: Ledger, catalog: Catalog, input: HandlerInput): Promise<HandlerResult> {
  const before = await ledger.getKey(input.params.key_id);
  const record = await ledger.updateKey(input.params.key_id, keySettings(catalog, input.body));
  if (!record) throw new GatewayError('not_found', `key "${input.params.key_id}" does not exist`, { param: 'key_id' });
  await recordChange(ledger, input, { action: 'key.update', targetType: 'key', targetId: record.id, before: before ? keyBody(before) : null, after: keyBody(record) });
  return { kind: 'json', status: 200, body: keyBody(record) };
}

export async function revokeKey(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const before = await ledger.getKey(input.params.key_id);
  const record = await ledger.revokeKey(input.params.key_id);
  if (!record) throw new GatewayError('not_found', `key "${input.params.key_id}" does not exist`, { param: 'key_id' });
  await recordChange(ledger, input, { action: 'key.revoke', targetType: 'key', targetId: record.id, before: before ? keyBody(before) : null, after: keyBody(record) });
  return { kind: 'json', status: 200, body: keyBody(record) };
}
