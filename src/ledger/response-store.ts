import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { LedgerStatements } from './statements.js';

type Json = Record<string, unknown>;

/** OpenAI keeps stored responses 30 days; so do we unless SWITCHYARD_RESPONSES_RETENTION_DAYS says otherwise. */
export const DEFAULT_RESPONSE_RETENTION_DAYS = 30;

/** Retention of stored Responses in ms, from SWITCHYARD_RESPONSES_RETENTION_DAYS (a positive number of days). */
export function responseRetentionMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SWITCHYARD_RESPONSES_RETENTION_DAYS;
  const days = raw === undefined || raw === '' ? DEFAULT_RESPONSE_RETENTION_DAYS : Number(raw);
  if (!Number.isFinite(days) || days <= 0) throw new Error(`SWITCHYARD_RESPONSES_RETENTION_DAYS must be a positive number of days (got "${raw}")`);
  return days * 86_400_000;
}

export interface StoredResponse {
  response: Json;
  /** Every item the response was given, earlier turns (`previous_response_id`) first. */
  inputItems: Json[];
}

/** Expired responses are deleted at most this often per instance, by the next store. */
const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Stored Responses per account (`store: true`), kept `retentionMs`. A response of another account,
 * an expired or a deleted one, is simply not found. Items are indexed by id for `item_reference`.
 */
export class ResponseStore {
  private lastPurge = 0;

  private readonly db: Kysely<Database>;

  constructor(
    private readonly statements: LedgerStatements,
    readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.db = statements.db;
  }

  /** Stores a finished response with the items it was given; `ownItems` (its new input) and its output become referable. */
  async store(accountId: string, response: Json & { id: string }, inputItems: Json[], ownItems: Json[]): Promise<void> {
    await this.purgeExpired();
    const expires = new Date(this.now() + this.retentionMs);
    const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
    const items = [...ownItems, ...output].filter((i) => typeof i.id === 'string').map((i) => ({ item_id: i.id as string, item: i }));
    await this.statements.storeResponse({ id: response.id, accountId, response, inputItems, items, expiresAt: expires });
  }

  async get(accountId: string, id: string): Promise<StoredResponse | undefined> {
    const row = await this.db
      .selectFrom('stored_responses')
      .select(['response', 'input_items'])
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', new Date(this.now()))
      .executeTakeFirst();
    return row ? { response: row.response as Json, inputItems: row.input_items as Json[] } : undefined;
  }

  /** Deletes the response (and its referable items); false when the account has no such response. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const rows = await this.db
      .deleteFrom('stored_responses')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', new Date(this.now()))
      .returning('id')
      .execute();
    return rows.length > 0;
  }

  /** Stored items of the account by id (the newest response's, when several hold one id). */
  async items(accountId: string, ids: string[]): Promise<Map<string, Json>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('stored_response_items as i')
      .innerJoin('stored_responses as r', 'r.id', 'i.response_id')
      .select(['i.item_id', 'i.item'])
      .where('i.account_id', '=', accountId)
      .where('i.item_id', 'in', [...new Set(ids)])
      .where('r.expires_at', '>', new Date(this.now()))
      .orderBy('r.created_at', 'asc')
      .execute();
    return new Map(rows.map((r) => [r.item_id, r.item as Json]));
  }

  private async purgeExpired(): Promise<void> {
    if (this.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = this.now();
    await this.db.deleteFrom('stored_responses').where('expires_at', '<=', new Date(this.now())).execute();
  }
}
