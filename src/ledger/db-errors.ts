/** SQLite's constraint errors, as the SQLSTATE PostgreSQL gives the same violation. */
const SQLITE_STATES: Record<string, string> = {
  SQLITE_CONSTRAINT_UNIQUE: '23505',
  SQLITE_CONSTRAINT_PRIMARYKEY: '23505',
  SQLITE_CONSTRAINT_CHECK: '23514',
  SQLITE_CONSTRAINT_FOREIGNKEY: '23503',
};

/** Postgres SQLSTATE of an error from pg or PGlite (both expose `.code`), or of SQLite's same violation. */
export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? (SQLITE_STATES[code] ?? code) : undefined;
}

/** The name of the CHECK constraint that `e` says was violated (PostgreSQL's field, or SQLite's message). */
export function violatedCheck(e: unknown): string | undefined {
  const err = e as { constraint?: unknown; message?: unknown } | null;
  if (typeof err?.constraint === 'string') return err.constraint;
  return typeof err?.message === 'string' ? /CHECK constraint failed: (\w+)/.exec(err.message)?.[1] : undefined;
}

export const UNIQUE_VIOLATION = '23505';
export const CHECK_VIOLATION = '23514';
export const FOREIGN_KEY_VIOLATION = '23503';

/**
 * SQLSTATEs of a database that is away rather than a statement that is wrong: connection
 * exceptions (class 08), shutdown and start-up (57P01-57P03), a statement cancelled by
 * statement_timeout (57014), too many connections (53300).
 */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|57014|53300)$/;
/** Socket errors of a connection that could not be made or was lost; SQLite's file locked by another process. */
const UNAVAILABLE_CODES = new Set(['SQLITE_BUSY', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** pg's own messages for the same (it throws plain Errors without a code for these). */
const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Connection ended|Client has encountered a connection error/i;

/**
 * How long a request waits for the database (a key lookup, a hold) before it is answered 503: the
 * connection and statement timeouts bound one statement, this bounds the wait for a turn too.
 */
export const REQUEST_DB_WAIT_MS = 1_000;

/** A request waited for the database longer than REQUEST_DB_WAIT_MS: the database counts as away. */
export class DatabaseDeadline extends Error {
  override name = 'DatabaseDeadline';
  constructor(what: string) {
    super(`the database did not answer ${what} within ${REQUEST_DB_WAIT_MS} ms`);
  }
}

/**
 * True when `e` says the database cannot be reached now (refused, reset, timed out, shutting
 * down), so the same statement may succeed later: callers answer 503 and retry, never crash.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let cause = e, depth = 0; cause && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof DatabaseDeadline) return true;
    const state = sqlState(cause);
    if (state && (UNAVAILABLE_STATES.test(state) || UNAVAILABLE_CODES.has(state))) return true;
    if (cause instanceof AggregateError && cause.errors.some(isDatabaseUnavailable)) return true;
    if (cause instanceof Error && UNAVAILABLE_MESSAGES.test(cause.message)) return true;
  }
  return false;
}
