/**
 * The debt_pricing migration on a SQLite ledger that already holds money: SQLite cannot drop a CHECK,
 * so `holds` is rebuilt. Its rows, the budget rows that reference them and the journal come through
 * unchanged, foreign keys still hold, and a capture above its hold is then accepted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteMigrations } from '../index.js';
import { openSqlite } from '../../sqlite/database.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-debt-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function migrator(db: Kysely<any>, upTo?: string) {
  const names = Object.keys(sqliteMigrations).sort();
  const chosen = upTo === undefined ? names : names.slice(0, names.indexOf(upTo));
  return new Migrator({ db, provider: { getMigrations: async () => Object.fromEntries(chosen.map((n) => [n, sqliteMigrations[n]])) } });
}

describe('debt_pricing on a SQLite ledger with rows', () => {
  it('rebuilds holds keeping every row and reference, then takes a capture above its hold', async () => {
    const { dialect, close } = openSqlite(join(dir, 'ledger.db'));
    const db = new Kysely<any>({ dialect });
    try {
      expect((await migrator(db, '20261128200000_debt_pricing').migrateToLatest()).error).toBeUndefined();
      await sql`INSERT INTO accounts (id, name, balance) VALUES ('acct_a', 'a', 1000)`.execute(db);
      await sql`INSERT INTO api_keys (id, account_id, prefix, hash) VALUES ('key_a', 'acct_a', 'sk-sy-aaaaaa', ${'a'.repeat(64)})`.execute(db);
      await sql`INSERT INTO holds (id, account_id, amount, status, captured, expires_at, resolved_at) VALUES
        ('h1', 'acct_a', 300, 'settled', 200, 1, 2), ('h2', 'acct_a', 100, 'pending', 0, ${Date.now() + 60_000}, NULL)`.execute(db);
      await sql`INSERT INTO budget_holds (hold_id, key_id, period, period_start) VALUES ('h2', 'key_a', 'day', 0)`.execute(db);
      const before = await sql`SELECT * FROM holds ORDER BY id`.execute(db);

      expect((await migrator(db).migrateToLatest()).error).toBeUndefined();
      expect((await sql`SELECT * FROM holds ORDER BY id`.execute(db)).rows).toEqual(before.rows);
      expect((await sql`PRAGMA foreign_key_check`.execute(db)).rows).toEqual([]);
      expect((await sql<{ foreign_keys: bigint }>`PRAGMA foreign_keys`.execute(db)).rows[0].foreign_keys).toBe(1n);
      const indexes = (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'holds' AND sql IS NOT NULL ORDER BY name`.execute(db)).rows;
      expect(indexes.map((i) => i.name)).toEqual(['holds_account', 'holds_pending_expiry']);
      // A budget row still needs its hold, and a hold may now capture more than its amount.
      await expect(sql`INSERT INTO budget_holds (hold_id, owner, period, period_start) VALUES ('nope', 'key_a', 'day', 0)`.execute(db)).rejects.toThrow(/FOREIGN KEY/);
      await sql`UPDATE holds SET status = 'settled', captured = 250, resolved_at = 3 WHERE id = 'h2'`.execute(db);
      await expect(sql`UPDATE holds SET captured = -1 WHERE id = 'h1'`.execute(db)).rejects.toThrow(/CHECK/);
    } finally {
      await db.destroy().catch(() => undefined);
      close();
    }
  });
});
