import { sql, type Kysely } from 'kysely';

/**
 * Stored Responses (OpenAI's `store: true`): each response with the input items it was given, per
 * account, until `expires_at`; and every input and output item by id, for `item_reference`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE stored_responses (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      response jsonb NOT NULL,
      input_items jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX stored_responses_expiry ON stored_responses (expires_at)`.execute(db);
  await sql`
    CREATE TABLE stored_response_items (
      account_id text NOT NULL,
      item_id text NOT NULL,
      response_id text NOT NULL REFERENCES stored_responses(id) ON DELETE CASCADE,
      item jsonb NOT NULL,
      PRIMARY KEY (account_id, item_id, response_id)
    )`.execute(db);
  await sql`CREATE INDEX stored_response_items_response ON stored_response_items (response_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS stored_response_items`.execute(db);
  await sql`DROP TABLE IF EXISTS stored_responses`.execute(db);
}
