import type { Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { Database } from './schema.js';
import { MAX_BALANCE, MONEY_UNIT, type Account, type JournalEntry } from './types.js';
import { newAccountId } from './ids.js';
import { toAccount, toJournalEntry } from './rows.js';
import { createdBefore } from './read-ledger.js';
import type { LedgerStatements } from './statements.js';

/** Creates the account and journals a non-zero opening balance as a credit, in one statement. */
export async function createAccount(s: LedgerStatements, name: string, initialBalance = 0n): Promise<Account> {
  if (initialBalance < 0n) throw new GatewayError('invalid_request', 'initial balance must not be negative');
  return toAccount(await s.createAccount(newAccountId(), name, initialBalance));
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
  s: LedgerStatements,
  accountId: string,
  amount: bigint,
  reason: string,
): Promise<JournalEntry> {
  if (amount === 0n) throw new GatewayError('invalid_request', 'credit amount must not be zero');
  const row = await s.credit(accountId, amount, reason, MAX_BALANCE);
  if (row) return toJournalEntry(row);
  // Diagnosis only: the statement above already decided.
  const account = await getAccount(s.db, accountId);
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
