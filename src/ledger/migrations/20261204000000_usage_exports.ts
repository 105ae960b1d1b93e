import { sql, type Kysely } from 'kysely';

/**
 * The usage export's cursor (see ../usage-export.ts): per export, the last usage record delivered,
 * as its (created_at, request_id), and the instance exporting now with the time its claim lapses,
 * so that one gateway at a time delivers and another takes over when it stops renewing. The usage
 * records themselves are the outbox: nothing is added to them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE usage_exports (
      name text PRIMARY KEY,
      after_created_at timestamptz NOT NULL DEFAULT 'epoch',
      after_request_id text NOT NULL DEFAULT '',
      delivered bigint NOT NULL DEFAULT 0 CHECK (delivered >= 0),
      delivered_at timestamptz,
      holder text,
      held_until timestamptz,
      CONSTRAINT usage_exports_claim CHECK ((holder IS NULL) = (held_until IS NULL))
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS usage_exports`.execute(db);
}
