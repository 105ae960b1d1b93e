import type { Kysely } from 'kysely';
import { GatewayError } from '../ir/errors.js';
import type { AccountRow, Database } from './schema.js';
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

/** What requests hold on a lease of this instance, exactly (undefined: another instance's lease). */
export type LeaseHolding = (leaseId: string) => bigint | undefined;

export async function getAccount(db: Kysely<Database>, id: string, holding?: LeaseHolding): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row && (await withoutUnusedLeases(db, [row], holding))[0];
}

/**
 * The accounts as a client sees them: `held` without the unused part of active balance leases,
 * which any request may have. What requests hold on a lease is this instance's own figure for its
 * leases, and the lease row's `in_use` (as its instance last wrote it) for the others'.
 */
async function withoutUnusedLeases(db: Kysely<Database>, rows: AccountRow[], holding?: LeaseHolding): Promise<Account[]> {
  const leased = rows.filter((r) => r.held > 0n).map((r) => r.id);
  const unused = new Map<string, bigint>();
  if (leased.length > 0) {
    const leases = await db.selectFrom('leases').select(['id', 'account_id', 'amount', 'in_use']).where('account_id', 'in', leased).where('status', '=', 'active').execute();
    for (const l of leases) {
      const used = holding?.(l.id) ?? l.in_use;
      const free = l.amount > used ? l.amount - used : 0n;
      unused.set(l.account_id, (unused.get(l.account_id) ?? 0n) + free);
    }
  }
  return rows.map((r) => toAccount({ ...r, held: r.held - (unused.get(r.id) ?? 0n) }));
}

/**
 * Newest first; with `beforeId`, the accounts created before that one (the next page). An
 * unknown cursor is a 400 naming `before_id`.
 */
export async function listAccounts(db: Kysely<Database>, limit = 100, beforeId?: string, holding?: LeaseHolding): Promise<Account[]> {
  let q = db.selectFrom('accounts').selectAll();
  if (beforeId !== undefined) {
    if (!(await getAccount(db, beforeId))) throw new GatewayError('invalid_request', `no account "${beforeId}"`, { param: 'before_id' });
    q = q.where(createdBefore('accounts', 'id', beforeId));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return withoutUnusedLeases(db, rows, holding);
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
