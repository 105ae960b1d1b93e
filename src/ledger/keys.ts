import { sql } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { KeyAuth, KeyRecord } from './types.js';
import { hashKey, KEY_DISPLAY_CHARS, newApiKey, newKeyId } from './ids.js';
import { sqlState, FOREIGN_KEY_VIOLATION } from './db-errors.js';
import { toKeyRecord } from './rows.js';
import type { LedgerStatements } from './statements.js';
import { BUDGET_PERIODS, budgetsOf, checkBudgets, checkTimeZone, replaceBudgets, type KeyBudget } from './budgets.js';

/** What a key is issued with, or changed to: a null limit is no limit. */
export interface KeySettings {
  name?: string;
  rpmLimit?: number | null;
  tpmLimit?: number | null;
  allowedModels?: string[] | null;
  /** Replaces every budget; an empty list or null removes them. */
  budgets?: KeyBudget[] | null;
  /** IANA name: where the budgets' days, weeks and months begin. */
  budgetTimeZone?: string;
  /** After it the key is refused as if revoked; null: never. */
  expiresAt?: Date | null;
}

/** Issues a key; only its sha256 is stored, so the raw key is returned exactly once. */
export async function createKey(
  s: LedgerStatements,
  accountId: string,
  settings: KeySettings = {},
): Promise<{ key: string; record: KeyRecord }> {
  const key = newApiKey();
  const budgets = [...(settings.budgets ?? [])].sort((a, b) => BUDGET_PERIODS.indexOf(a.period) - BUDGET_PERIODS.indexOf(b.period));
  checkBudgets(budgets);
  try {
    return await s.db.transaction().execute(async (trx) => {
      if (settings.budgetTimeZone !== undefined) await checkTimeZone(s.on(trx), settings.budgetTimeZone);
      const row = await trx
        .insertInto('api_keys')
        .values({
          id: newKeyId(),
          account_id: accountId,
          name: settings.name ?? '',
          prefix: key.slice(0, KEY_DISPLAY_CHARS),
          hash: hashKey(key),
          rpm_limit: settings.rpmLimit ?? null,
          tpm_limit: settings.tpmLimit ?? null,
          allowed_models: settings.allowedModels ?? null,
          expires_at: settings.expiresAt ?? null,
          ...(settings.budgetTimeZone !== undefined && { budget_time_zone: settings.budgetTimeZone }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await replaceBudgets(trx, row.id, budgets);
      return { key, record: toKeyRecord(row, budgets) };
    });
  } catch (e) {
    if (sqlState(e) === FOREIGN_KEY_VIOLATION) {
      throw new GatewayError('not_found', `account ${accountId} not found`, { cause: e });
    }
    throw e;
  }
}

export async function listKeys(s: LedgerStatements, accountId?: string): Promise<KeyRecord[]> {
  let q = s.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  const rows = await q.execute();
  const budgets = await budgetsOf(s.db, rows.map((r) => r.id));
  return rows.map((r) => toKeyRecord(r, budgets.get(r.id) ?? []));
}

/** One key, revoked or not; undefined when unknown. */
export async function getKey(s: LedgerStatements, keyId: string): Promise<KeyRecord | undefined> {
  const row = await s.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
  return row && withBudgets(s, row);
}

/** Revoking twice keeps the first revocation time. */
export async function revokeKey(s: LedgerStatements, keyId: string): Promise<KeyRecord | undefined> {
  // On PostgreSQL the database announces it to every instance (the leases migration's trigger).
  const row = await s.db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`coalesce(revoked_at, ${s.now()})` })
    .where('id', '=', keyId)
    .returningAll()
    .executeTakeFirst();
  return row && withBudgets(s, row);
}

async function withBudgets(s: LedgerStatements, row: Parameters<typeof toKeyRecord>[0]): Promise<KeyRecord> {
  return toKeyRecord(row, (await budgetsOf(s.db, [row.id])).get(row.id) ?? []);
}

/**
 * Changes a key's name, limits, budgets or expiry (a field left out is left as it is); undefined
 * when unknown. A revoked key is a 409: it stays as it was when it was revoked. Budgets are
 * replaced as a whole; the usage already counted in the current periods stays counted.
 */
export async function updateKey(s: LedgerStatements, keyId: string, settings: KeySettings): Promise<KeyRecord | undefined> {
  const changes = {
    ...(settings.name !== undefined && { name: settings.name }),
    ...(settings.rpmLimit !== undefined && { rpm_limit: settings.rpmLimit }),
    ...(settings.tpmLimit !== undefined && { tpm_limit: settings.tpmLimit }),
    ...(settings.allowedModels !== undefined && { allowed_models: settings.allowedModels }),
    ...(settings.expiresAt !== undefined && { expires_at: settings.expiresAt }),
    ...(settings.budgetTimeZone !== undefined && { budget_time_zone: settings.budgetTimeZone }),
  };
  const budgets = settings.budgets === undefined ? undefined : (settings.budgets ?? []);
  if (budgets) checkBudgets(budgets);
  const changing = Object.keys(changes).length > 0 || budgets !== undefined;
  if (changing) {
    const row = await s.db.transaction().execute(async (trx) => {
      if (settings.budgetTimeZone !== undefined) await checkTimeZone(s.on(trx), settings.budgetTimeZone);
      // A no-op SET when only the budgets change: it still locks the row and checks revocation.
      const updated = await trx
        .updateTable('api_keys')
        .set(Object.keys(changes).length ? changes : { name: sql<string>`name` })
        .where('id', '=', keyId)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      if (updated && budgets) await replaceBudgets(trx, keyId, budgets);
      return updated;
    });
    if (row) return withBudgets(s, row);
  }
  const row = await s.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
  if (row?.revoked_at && changing) throw new GatewayError('conflict', `key "${keyId}" is revoked`, { param: 'key_id' });
  return row && withBudgets(s, row);
}

/** Looks a key up by its hash (see hashKey); undefined when unknown, revoked or expired. */
export async function authenticate(s: LedgerStatements, keyHash: string): Promise<KeyAuth | undefined> {
  // A fixed SQL text: the query builder's compile step costs more CPU than the query.
  const { rows } = await sql<{ id: string; account_id: string; rpm_limit: number | null; tpm_limit: number | null; allowed_models: string[] | null; expires_at: Date | null; budgeted: unknown }>`/* prepared:authenticate-key */
    SELECT id, account_id, rpm_limit, tpm_limit, allowed_models, expires_at,
      EXISTS (SELECT 1 FROM key_budgets b WHERE b.key_id = api_keys.id) AS budgeted
    FROM api_keys
    WHERE hash = ${keyHash} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${s.now()})`.execute(s.db);
  const row = rows[0];
  if (!row) return undefined;
  const auth: KeyAuth = { accountId: row.account_id, keyId: row.id };
  // PostgreSQL answers a boolean, SQLite 0 or 1.
  if (row.budgeted === true || row.budgeted === 1 || row.budgeted === 1n) auth.keyBudgets = true;
  if (row.expires_at !== null) auth.expiresAt = row.expires_at.getTime();
  if (row.rpm_limit !== null || row.tpm_limit !== null) {
    auth.limits = {
      ...(row.rpm_limit !== null && { requestsPerMinute: row.rpm_limit }),
      ...(row.tpm_limit !== null && { tokensPerMinute: row.tpm_limit }),
    };
  }
  if (row.allowed_models !== null) auth.allowedModels = new Set(row.allowed_models);
  return auth;
}
