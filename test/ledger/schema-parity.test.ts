import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { DATE_COLUMNS, JSON_COLUMNS, NUMBER_COLUMNS } from '../../src/ledger/sqlite/database.js';
import { pgTarget, type OpenedTarget } from './db-targets.js';
import { catalogDifferences, postgresCatalog, sqliteCatalog, type Catalog } from './schema-catalog.js';

/**
 * The SQLite ledger keeps its own migration history (migrations/sqlite/), written by hand to end
 * where PostgreSQL's migrations end. This compares the two schemas from each database's catalog
 * after migrating: a PostgreSQL migration without its SQLite counterpart (a table, a column, its
 * type or nullability or default, a key, a CHECK, an index) fails here. Triggers differ by design
 * (PostgreSQL's journal trigger is one function; SQLite has one trigger per statement kind) and
 * are covered by the ledger suite's append-only test on each database.
 */
describe('the SQLite schema is where the PostgreSQL migrations end', () => {
  const open: Array<{ ledger: Ledger; close(): Promise<void> }> = [];
  let sqlite: Catalog;
  let pglite: Awaited<ReturnType<typeof postgresCatalog>>;

  beforeAll(async () => {
    const s = await openLedger({ databaseUrl: 'sqlite::memory:' });
    const p = await openLedger({ dataDir: 'memory://', embedded: 'pglite' });
    open.push({ ledger: s, close: () => s.close() }, { ledger: p, close: () => p.close() });
    sqlite = await sqliteCatalog(s.db);
    pglite = await postgresCatalog(p.db);
  });
  afterAll(() => Promise.all(open.map((o) => o.close())));

  it('has the same tables, columns, keys, CHECK constraints and indexes as PostgreSQL (PGlite)', () => {
    expect(pglite.columns.size).toBeGreaterThan(50);
    expect(catalogDifferences(pglite, sqlite)).toEqual([]);
  });

  it('reads every column back as PostgreSQL returns it (sqlite/database.ts converts timestamps, JSON and integers by column name)', () => {
    const wrong: string[] = [];
    for (const [name, pgType] of pglite.pgTypes) {
      const column = name.split('.')[1];
      const expected = pgType === 'timestamp with time zone' ? 'date' : pgType === 'jsonb' || pgType === 'ARRAY' ? 'json' : pgType === 'integer' ? 'number' : 'as stored';
      const actual = DATE_COLUMNS.has(column) ? 'date' : JSON_COLUMNS.has(column) ? 'json' : NUMBER_COLUMNS.has(column) ? 'number' : 'as stored';
      if (actual !== expected) wrong.push(`${name}: ${pgType} should read as ${expected}, SQLite reads it ${actual}`);
    }
    expect(wrong).toEqual([]);
  });

  it('fails when a PostgreSQL migration has no SQLite counterpart', async () => {
    const p = await openLedger({ dataDir: 'memory://', embedded: 'pglite' });
    try {
      await sql`ALTER TABLE accounts ADD COLUMN note text NOT NULL DEFAULT ''`.execute(p.db);
      await sql`ALTER TABLE holds ADD CONSTRAINT hold_short CHECK (amount < 1000000000000)`.execute(p.db);
      await sql`CREATE INDEX holds_created ON holds (created_at)`.execute(p.db);
      await sql`ALTER TABLE usage_records ALTER COLUMN status DROP NOT NULL`.execute(p.db);
      expect(catalogDifferences(await postgresCatalog(p.db), sqlite)).toEqual([
        'check holds: hold_short is missing on SQLite',
        "column accounts.note (TEXT|not null|default) is missing on SQLite",
        'column usage_records.status is TEXT|null|no default on PostgreSQL but TEXT|not null|no default on SQLite',
        'index holds: holds_created is missing on SQLite',
      ]);
    } finally {
      await p.close();
    }
  });

  if (pgTarget) {
    let target: OpenedTarget;
    beforeAll(async () => {
      target = await pgTarget!.open();
    });
    afterAll(() => target?.cleanup());
    it('PostgreSQL itself ends where PGlite does (its own schema, via search_path)', async () => {
      const pg = await postgresCatalog(target.ledger.db);
      expect(catalogDifferences(pg, sqlite)).toEqual([]);
      expect([...pg.columns].sort()).toEqual([...pglite.columns].sort());
      expect([...pg.checks].sort()).toEqual([...pglite.checks].sort());
    });
  }
});
