import { sql, type Kysely } from 'kysely';

/**
 * Budgets of users and groups beside the keys' (see budgets.ts). A budget's usage rows and the
 * rows a hold reserved on are named by their owner instead of a key: a key's id (`key_…`), a
 * user's (`usr_…`) or `group:` and the group's name. The owner is no longer a key, so the usage
 * rows lose their reference to api_keys; a hold reserves on one row per owner and period.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE budget_usage DROP CONSTRAINT budget_usage_key_id_fkey`.execute(db);
  await sql`ALTER TABLE budget_usage RENAME COLUMN key_id TO owner`.execute(db);
  await sql`ALTER TABLE budget_holds RENAME COLUMN key_id TO owner`.execute(db);
  await sql`ALTER TABLE budget_holds DROP CONSTRAINT budget_holds_pkey, ADD PRIMARY KEY (hold_id, owner, period)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM budget_holds WHERE owner NOT IN (SELECT id FROM api_keys)`.execute(db);
  await sql`DELETE FROM budget_usage WHERE owner NOT IN (SELECT id FROM api_keys)`.execute(db);
  await sql`ALTER TABLE budget_holds DROP CONSTRAINT budget_holds_pkey, ADD PRIMARY KEY (hold_id, period)`.execute(db);
  await sql`ALTER TABLE budget_holds RENAME COLUMN owner TO key_id`.execute(db);
  await sql`ALTER TABLE budget_usage RENAME COLUMN owner TO key_id`.execute(db);
  await sql`ALTER TABLE budget_usage ADD CONSTRAINT budget_usage_key_id_fkey FOREIGN KEY (key_id) REFERENCES api_keys(id)`.execute(db);
}
