/**
 * Kysely on PGlite: PostgreSQL's adapter, compiler and introspector over PGlite's one session.
 * Written here rather than taken from kysely-pglite-dialect, whose peer range stops at PGlite 0.4:
 * installed as a dependency of the npm package, it brought a second PGlite (27 MB) beside ours.
 *
 * PGlite has one session, so the driver hands out one connection at a time and queues the rest:
 * a transaction's statements never interleave with another caller's.
 */
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

export class PGliteDialect implements Dialect {
  constructor(private readonly client: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.client);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly client: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.client.query<R>(query.sql, [...query.parameters]);
    // PGlite reports affected rows for INSERT, UPDATE, DELETE and MERGE only.
    return result.affectedRows === undefined ? { rows: result.rows } : { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) };
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error('chunkSize must be a positive integer');
    const { rows } = await this.client.query<R>(query.sql, [...query.parameters]);
    for (let i = 0; i < rows.length; i += chunkSize) yield { rows: rows.slice(i, i + chunkSize) };
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private held = false;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly client: PGlite) {
    this.connection = new PGliteConnection(client);
  }

  async init() {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.held = true;
    return this.connection;
  }

  async releaseConnection() {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings) {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await conn.executeQuery(CompiledQuery.raw(`start transaction${level}`));
  }

  async commitTransaction(conn: DatabaseConnection) {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection) {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy() {
    await this.client.close();
  }
}
