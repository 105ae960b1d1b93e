import { sql, type Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { Database, AccountRow, JournalRow } from './schema.js';
import { MAX_BALANCE, MONEY_UNIT, type Account, type JournalEntry } from './types.js';
import { newAccountId } from './ids.js';
import { toAccount, toJournalEntry } from './rows.js';
import { createdBefore } from './read-ledger.js';
import { isSqlite, sqliteTransaction } from './dialect.js';

/** Creates the account and journals a non-zero opening balance as a credit, in one statement. */
export async function createAccount(db: Kysely<Database>, name: string, initialBalance = 0n): Promise<Account> {
  if (initialBalance < 0n) throw new GatewayError('invalid_request', 'initial balance must not be negative');
  if (isSqlite(db)) {
    return sqliteTransaction(db, async (trx) => {
      const a = await trx.insertInto('accounts').values({ id: newAccountId(), name, balance: initialBalance }).returningAll().executeTakeFirstOrThrow();
      if (a.balance !== 0n) await trx.insertInto('journal').values({ account_id: a.id, kind: 'credit', amount: a.balance, balance_after: a.balance, reason: 'initial balance' }).execute();
      return toAccount(a);
    });
  }
  const { rows } = await sql<AccountRow>`
    WITH a AS (
      INSERT INTO accounts (id, name, balance) VALUES (${newAccountId()}, ${name}, ${initialBalance})
      RETURNING *
    ), j AS (
      INSERT INTO journal (account_id, kind, amount, balance_after, reason)
      SELECT id, 'credit', balance, balance, 'initial balance' FROM a WHERE balance <> 0
    )
    SELECT * FROM a`.execute(db);
  return toAccount(rows[0]);
}

export async function getAccount(db: Kysely<Database>, id: string): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toAccount(row);
}

/**
 * Newest first; with `beforeId`, the accounts created before that one (the next page). An
 * unknown cursor is a 400 naming `before_id`.
 */
export async function listAccounts(db: Kysely<Database>, limit = 100, beforeId?: string): Promise<Account[]> {
  let q = db.selectFrom('accounts').selectAll();
  if (beforeId !== undefined) {
    if (!(await getAccount(db, beforeId))) throw new GatewayError('invalid_request', `no account "${beforeId}"`, { param: 'before_id' });
    q = q.where(createdBefore('accounts', 'id', beforeId));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toAccount);
}

/**
 * Adds `amount` (negative for a correction) and journals it with the exact balance after.
 * A correction may never take the balance below what is held.
 */
export async function credit(
  db: Kysely<Database>,
  accountId: string,
  amount: bigint,
  reason: string,
): Promise<JournalEntry> {
  if (amount === 0n) throw new GatewayError('invalid_request', 'credit amount must not be zero');
  const { rows } = isSqlite(db) ? { rows: await creditSqlite(db, accountId, amount, reason) } : await sql<JournalRow>`
    WITH a AS (
      UPDATE accounts SET balance = balance + ${amount}
      WHERE id = ${accountId} AND balance + ${amount} >= held AND balance + ${amount} <= ${MAX_BALANCE}
      RETURNING id, balance
    )
    INSERT INTO journal (account_id, kind, amount, balance_after, reason)
    SELECT id, 'credit', ${amount}, balance, ${reason} FROM a
    RETURNING *`.execute(db);
  if (rows[0]) return toJournalEntry(rows[0]);
  // Diagnosis only: the statement above already decided.
  const account = await getAccount(db, accountId);
  if (!account) throw new GatewayError('not_found', `account ${accountId} not found`);
  if (account.balance + amount > MAX_BALANCE) {
    throw new GatewayError('invalid_request', `the balance would exceed ${MAX_BALANCE} ${MONEY_UNIT}`, { param: 'amount' });
  }
  throw new GatewayError(
    'invalid_request',
    `a correction of ${amount} nanodollars would leave the balance (${account.balance}) below the held amount (${account.held})`,
    // JSON numbers, like every amount of the API (balances never exceed MAX_BALANCE, 2^53 - 1).
    { param: 'amount', details: { balance: Number(account.balance), held: Number(account.held), unit: MONEY_UNIT } },
  );
}

/** credit's statement on SQLite: the same update and journal line, in one transaction. */
async function creditSqlite(db: Kysely<Database>, accountId: string, amount: bigint, reason: string): Promise<JournalRow[]> {
  return sqliteTransaction(db, async (trx) => {
    const { rows: [a] } = await sql<{ id: string; balance: bigint }>`
      UPDATE accounts SET balance = balance + ${amount}
      WHERE id = ${accountId} AND balance + ${amount} >= held AND balance + ${amount} <= ${MAX_BALANCE}
      RETURNING id, balance`.execute(trx);
    if (!a) return [];
    return [await trx.insertInto('journal').values({ account_id: a.id, kind: 'credit', amount, balance_after: a.balance, reason }).returningAll().executeTakeFirstOrThrow()];
  });
}
