import { sql, type Kysely } from 'kysely';

/** Per-key rate limits (requests and tokens per minute); NULL is no limit. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_keys
      ADD COLUMN rpm_limit integer CHECK (rpm_limit > 0),
      ADD COLUMN tpm_limit integer CHECK (tpm_limit > 0)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_keys DROP COLUMN rpm_limit, DROP COLUMN tpm_limit`.execute(db);
}
