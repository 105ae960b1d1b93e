import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { toJson } from './json.js';
import { isSqlite } from './dialect.js';

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

  constructor(
    private readonly db: Kysely<Database>,
    readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores a finished response with the items it was given; `ownItems` (its new input) and its output become referable. */
  async store(accountId: string, response: Json & { id: string }, inputItems: Json[], ownItems: Json[]): Promise<void> {
    await this.purgeExpired();
    const expires = new Date(this.now() + this.retentionMs);
    const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
    const items = [...ownItems, ...output].filter((i) => typeof i.id === 'string').map((i) => ({ item_id: i.id as string, item: i }));
    if (isSqlite(this.db)) return this.storeSqlite(accountId, response, inputItems, items, expires);
    await this.db.transaction().execute(async (tx) => {
      await sql`
        INSERT INTO stored_responses (id, account_id, response, input_items, expires_at)
        VALUES (${response.id}, ${accountId}, ${toJson(response)}::jsonb, ${toJson(inputItems)}::jsonb, ${expires})
        ON CONFLICT (id) DO NOTHING`.execute(tx);
      if (items.length === 0) return;
      await sql`
        INSERT INTO stored_response_items (account_id, item_id, response_id, item)
        SELECT ${accountId}, x.item_id, ${response.id}, x.item
        FROM jsonb_to_recordset(${toJson(items)}::jsonb) AS x(item_id text, item jsonb)
        ON CONFLICT DO NOTHING`.execute(tx);
    });
  }

  /** store's statements on SQLite, where JSON is text and the items are unpacked by json_each. */
  private async storeSqlite(accountId: string, response: Json & { id: string }, inputItems: Json[], items: Array<{ item_id: string; item: Json }>, expires: Date): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await sql`
        INSERT INTO stored_responses (id, account_id, response, input_items, expires_at)
        VALUES (${response.id}, ${accountId}, ${toJson(response)}, ${toJson(inputItems)}, ${expires})
        ON CONFLICT (id) DO NOTHING`.execute(tx);
      if (items.length === 0) return;
      // WHERE true: SQLite would read the ON of ON CONFLICT as a join's.
      await sql`
        INSERT INTO stored_response_items (account_id, item_id, response_id, item)
        SELECT ${accountId}, x.value ->> '$.item_id', ${response.id}, x.value -> '$.item'
        FROM json_each(${toJson(items)}) AS x WHERE true
        ON CONFLICT DO NOTHING`.execute(tx);
    });
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
