import { sql, type Kysely } from 'kysely';

/** The catalog models a key may use; NULL is every model. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_keys
      ADD COLUMN allowed_models text[] CHECK (allowed_models IS NULL OR cardinality(allowed_models) > 0)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_keys DROP COLUMN allowed_models`.execute(db);
}
