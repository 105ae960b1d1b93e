import { sql, type Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { Database } from './schema.js';
import type { HoldRequest } from './types.js';
import { MONEY_UNIT } from './types.js';
import { sqlState, UNIQUE_VIOLATION } from './db-errors.js';

/**
 * Reserves `amount` for a request: one statement raises `held` only where the available
 * balance covers it and inserts the hold (id = request id, so a retry cannot hold twice).
 * Row locks plus the re-checked WHERE make it exact under concurrency.
 */
export async function placeHold(db: Kysely<Database>, h: HoldRequest): Promise<void> {
  if (h.amount <= 0n) throw new GatewayError('invalid_request', `hold amount must be positive, got ${h.amount}`);
  if (!Number.isFinite(h.ttlMs) || h.ttlMs <= 0) throw new GatewayError('invalid_request', 'hold ttl must be positive');
  let placed: boolean;
  let duplicate: boolean;
  try {
    const { rows } = await sql<{ placed: boolean; duplicate: boolean }>`
      WITH a AS (
        UPDATE accounts SET held = held + ${h.amount}
        WHERE id = ${h.accountId} AND balance - held >= ${h.amount}
          AND NOT EXISTS (SELECT 1 FROM holds WHERE id = ${h.requestId})
        RETURNING id
      ), ins AS (
        INSERT INTO holds (id, account_id, amount, expires_at)
        SELECT ${h.requestId}, id, ${h.amount}, now() + make_interval(secs => ${h.ttlMs}::float8 / 1000)
        FROM a
        RETURNING id
      )
      SELECT EXISTS (SELECT 1 FROM ins) AS placed,
             EXISTS (SELECT 1 FROM holds WHERE id = ${h.requestId}) AS duplicate`.execute(db);
    ({ placed, duplicate } = rows[0]);
  } catch (e) {
    // Two concurrent holds with one id: the unique key rejects the second, atomically.
    if (sqlState(e) === UNIQUE_VIOLATION) throw conflict(h.requestId, e);
    throw e;
  }
  if (placed) return;
  if (duplicate) throw conflict(h.requestId);
  throw await insufficient(db, h);
}

function conflict(requestId: string, cause?: unknown): GatewayError {
  return new GatewayError('conflict', `a hold for request ${requestId} already exists`, { cause });
}

/** Builds the 402; reads the balance afresh (after the statement) so the numbers are current. */
async function insufficient(db: Kysely<Database>, h: HoldRequest): Promise<GatewayError> {
  const row = await db
    .selectFrom('accounts')
    .select(['balance', 'held'])
    .where('id', '=', h.accountId)
    .executeTakeFirst();
  if (!row) return new GatewayError('not_found', `account ${h.accountId} not found`);
  const available = row.balance - row.held;
  return new GatewayError(
    'insufficient_balance',
    `insufficient balance: this request needs ${h.amount} ${MONEY_UNIT} held but ${available} ${MONEY_UNIT} is available`,
    { details: { available: available.toString(), required: h.amount.toString(), unit: MONEY_UNIT } },
  );
}
