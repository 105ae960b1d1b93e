import { sql, type Kysely } from 'kysely';

/**
 * A ledger schema as its database's catalog describes it, in one shape for PostgreSQL
 * (information_schema and pg_catalog) and SQLite (sqlite_master and its pragmas), so the two can be
 * compared: the SQLite schema is its own migration history, kept by hand beside PostgreSQL's.
 */
export interface Catalog {
  /** `table.column` -> `type|null|default`, type as the SQLite column stores it. */
  columns: Map<string, string>;
  /** Primary keys, unique constraints and foreign keys: `table: kind(cols)[->ref(cols) on delete]`. */
  keys: Set<string>;
  /** CHECK constraints: named ones by name, unnamed ones by the column they constrain. */
  checks: Set<string>;
  /** Indexes created by name (not those backing a key). */
  indexes: Set<string>;
}

const IGNORED = /^(kysely_|sqlite_)/;

/** PostgreSQL's type as SQLite stores it (sqlite/database.ts converts the values back). */
function storedType(pgType: string): string {
  if (pgType === 'text') return 'TEXT';
  if (pgType === 'bigint' || pgType === 'integer') return 'INTEGER';
  if (pgType === 'timestamp with time zone') return 'INTEGER';
  if (pgType === 'jsonb' || pgType === 'ARRAY') return 'TEXT';
  return `unmapped PostgreSQL type ${pgType}`;
}

const ON_DELETE: Record<string, string> = { a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

export async function postgresCatalog(db: Kysely<any>): Promise<Catalog & { pgTypes: Map<string, string> }> {
  const cat = { columns: new Map<string, string>(), keys: new Set<string>(), checks: new Set<string>(), indexes: new Set<string>(), pgTypes: new Map<string, string>() };
  const pkColumns = new Set<string>();
  const { rows: cons } = await sql<{ tbl: string; conname: string; contype: string; cols: string; ref: string | null; ref_cols: string | null; del: string }>`
    SELECT t.relname AS tbl, c.conname, c.contype::text AS contype,
      (SELECT string_agg(a.attname, ',' ORDER BY a.attname) FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)) AS cols,
      ft.relname AS ref,
      (SELECT string_agg(a.attname, ',' ORDER BY a.attname) FROM pg_attribute a WHERE a.attrelid = c.confrelid AND a.attnum = ANY (c.confkey)) AS ref_cols,
      c.confdeltype::text AS del
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      LEFT JOIN pg_class ft ON ft.oid = c.confrelid
    WHERE n.nspname = current_schema()`.execute(db);
  const backing = new Set<string>();
  for (const c of cons) {
    if (IGNORED.test(c.tbl)) continue;
    backing.add(c.conname);
    if (c.contype === 'p') {
      cat.keys.add(`${c.tbl}: primary(${c.cols})`);
      for (const col of c.cols.split(',')) pkColumns.add(`${c.tbl}.${col}`);
    } else if (c.contype === 'u') cat.keys.add(`${c.tbl}: unique(${c.cols})`);
    else if (c.contype === 'f') cat.keys.add(`${c.tbl}: foreign(${c.cols})->${c.ref}(${c.ref_cols}) on delete ${ON_DELETE[c.del]}`);
    else if (c.contype === 'c') {
      // An unnamed CHECK is named <table>_<column>_check (or <table>_check) by PostgreSQL: compared by the columns it reads.
      const auto = new RegExp(`^${c.tbl}_.*check\\d*$`).test(c.conname);
      cat.checks.add(auto ? `${c.tbl}(${c.cols}): check` : `${c.tbl}: ${c.conname}`);
    } else if (c.contype !== 'n') cat.checks.add(`${c.tbl}: ${c.conname} (constraint type ${c.contype})`);
    // 'n' (PostgreSQL 18's NOT NULL constraints): compared as the columns' nullability.
  }
  const { rows: cols } = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string; has_default: boolean }>`
    SELECT table_name, column_name, data_type, is_nullable, column_default IS NOT NULL AS has_default
    FROM information_schema.columns WHERE table_schema = current_schema()`.execute(db);
  for (const c of cols) {
    if (IGNORED.test(c.table_name)) continue;
    const name = `${c.table_name}.${c.column_name}`;
    // A key's default (bigserial's sequence) is SQLite's rowid: not a default there.
    const dflt = c.has_default && !pkColumns.has(name);
    cat.columns.set(name, `${storedType(c.data_type)}|${c.is_nullable === 'YES' ? 'null' : 'not null'}|${dflt ? 'default' : 'no default'}`);
    cat.pgTypes.set(name, c.data_type);
    // jsonb only takes valid JSON: SQLite's JSON text column says so with CHECK (json_valid(...)).
    if (c.data_type === 'jsonb') cat.checks.add(`${c.table_name}(${c.column_name}): check`);
  }
  const { rows: idx } = await sql<{ tablename: string; indexname: string }>`
    SELECT tablename, indexname FROM pg_indexes WHERE schemaname = current_schema()`.execute(db);
  for (const i of idx) if (!IGNORED.test(i.tablename) && !backing.has(i.indexname)) cat.indexes.add(`${i.tablename}: ${i.indexname}`);
  return cat;
}

/** The parts of a CREATE TABLE's body, split at the commas outside parentheses and quotes. */
function tableParts(createSql: string): string[] {
  const body = createSql.slice(createSql.indexOf('(') + 1, createSql.lastIndexOf(')'));
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "'") quoted = !quoted;
    else if (!quoted && ch === '(') depth++;
    else if (!quoted && ch === ')') depth--;
    else if (!quoted && depth === 0 && ch === ',') {
      parts.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(body.slice(start).trim());
  return parts;
}

export async function sqliteCatalog(db: Kysely<any>): Promise<Catalog> {
  const cat: Catalog = { columns: new Map(), keys: new Set(), checks: new Set(), indexes: new Set() };
  const { rows: tables } = await sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master WHERE type = 'table'`.execute(db);
  for (const t of tables) {
    if (IGNORED.test(t.name)) continue;
    const { rows: cols } = await sql<{ name: string; type: string; notnull: bigint; dflt_value: string | null; pk: bigint }>`
      SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(${t.name})`.execute(db);
    const pk = cols.filter((c) => c.pk > 0n).map((c) => c.name).sort();
    if (pk.length > 0) cat.keys.add(`${t.name}: primary(${pk.join(',')})`);
    for (const c of cols) {
      const notNull = c.notnull === 1n || c.pk > 0n;
      cat.columns.set(`${t.name}.${c.name}`, `${c.type}|${notNull ? 'not null' : 'null'}|${c.dflt_value === null ? 'no default' : 'default'}`);
    }
    const { rows: fks } = await sql<{ id: bigint; table: string; from: string; to: string; on_delete: string }>`
      SELECT id, "table", "from", "to", on_delete FROM pragma_foreign_key_list(${t.name})`.execute(db);
    for (const f of fks) cat.keys.add(`${t.name}: foreign(${f.from})->${f.table}(${f.to}) on delete ${f.on_delete}`);
    const { rows: uniques } = await sql<{ name: string; origin: string }>`SELECT name, origin FROM pragma_index_list(${t.name}) WHERE origin = 'u'`.execute(db);
    for (const u of uniques) {
      const { rows: ucols } = await sql<{ name: string }>`SELECT name FROM pragma_index_info(${u.name})`.execute(db);
      cat.keys.add(`${t.name}: unique(${ucols.map((c) => c.name).sort().join(',')})`);
    }
    const columnNames = new Set(cols.map((c) => c.name));
    for (const part of tableParts(t.sql)) {
      const named = /^CONSTRAINT\s+(\w+)\s+CHECK\b/i.exec(part);
      const check = /\bCHECK\s*\((.*)\)/is.exec(part);
      if (named) cat.checks.add(`${t.name}: ${named[1]}`);
      else if (check) {
        // Compared by the columns its expression reads (string literals left out).
        const read = [...new Set(check[1].replace(/'[^']*'/g, '').match(/[a-z_][a-z0-9_]*/gi) ?? [])].filter((w) => columnNames.has(w)).sort();
        cat.checks.add(`${t.name}(${read.join(',')}): check`);
      }
    }
  }
  const { rows: idx } = await sql<{ tbl_name: string; name: string }>`SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`.execute(db);
  for (const i of idx) if (!IGNORED.test(i.tbl_name)) cat.indexes.add(`${i.tbl_name}: ${i.name}`);
  return cat;
}

/** What one catalog has that the other lacks or has differently, as readable lines (empty: the same). */
export function catalogDifferences(pg: Catalog, sqlite: Catalog): string[] {
  const out: string[] = [];
  for (const [name, shape] of pg.columns) {
    const other = sqlite.columns.get(name);
    if (other === undefined) out.push(`column ${name} (${shape}) is missing on SQLite`);
    else if (other !== shape) out.push(`column ${name} is ${shape} on PostgreSQL but ${other} on SQLite`);
  }
  for (const name of sqlite.columns.keys()) if (!pg.columns.has(name)) out.push(`column ${name} exists only on SQLite`);
  for (const [what, a, b] of [['key', pg.keys, sqlite.keys], ['check', pg.checks, sqlite.checks], ['index', pg.indexes, sqlite.indexes]] as const) {
    for (const x of a) if (!b.has(x)) out.push(`${what} ${x} is missing on SQLite`);
    for (const x of b) if (!a.has(x)) out.push(`${what} ${x} exists only on SQLite`);
  }
  return out.sort();
}
