import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { HoldCandidate, HoldOutcome } from '../statements.js';
import { inTransaction } from './transaction.js';
import { budgetCheck, budgetTake } from './budgets.js';
import { available, covers, duplicate, keyOk } from '../hold-admission.js';

/**
 * The batch on SQLite: one transaction, which holds the database's write lock from its BEGIN, so
 * what it reads stays true until it commits. The holds are taken in batch order, each with the
 * same checks as on PostgreSQL (new request id, live key of the account, room in each budget of
 * the key, the user and their groups,
 * available balance re-checked by the UPDATE itself); an account's holds in the batch are admitted
 * while they fit, one update of its row each. The row lock that folding avoids on PostgreSQL does
 * not exist here: the transaction is the only writer.
 */
export async function placeHolds(db: Kysely<Database>, valid: HoldCandidate[]): Promise<HoldOutcome[]> {
  return inTransaction(db, async (trx) => {
    const now = Date.now();
    const out: HoldOutcome[] = [];
    for (const { ord, h } of valid) {
      const keyId = h.keyId ?? null;
      const { rows: [c] } = await sql<{ duplicate: bigint; key_ok: bigint }>`
        SELECT ${duplicate(sql`${h.requestId}`)} AS duplicate,
          ${keyOk(sql`${keyId}`, sql`${h.accountId}`, sql`${now}`)} AS key_ok`.execute(trx);
      const row: HoldOutcome = { ord, placed: false, duplicate: c.duplicate === 1n, key_ok: c.key_ok === 1n, budget_ok: true, available: null };
      out.push(row);
      if (row.duplicate || !row.key_ok) continue;
      const budgets = await budgetCheck(trx, keyId, h.budgets ?? [], h.amount, now);
      if (budgets.over) {
        row.budget_ok = false;
        continue;
      }
      const { rows: [a] } = await sql<{ available: bigint }>`
        UPDATE accounts SET held = held + ${h.amount} WHERE id = ${h.accountId} AND ${covers('accounts', sql`${h.amount}`)}
        RETURNING ${available('accounts')} AS available`.execute(trx);
      if (!a) continue;
      await sql`
        INSERT INTO holds (id, account_id, amount, created_at, expires_at)
        VALUES (${h.requestId}, ${h.accountId}, ${h.amount}, ${now}, ${now + Math.ceil(h.ttlMs)})`.execute(trx);
      await budgetTake(trx, h.requestId, budgets.take, h.amount);
      row.placed = true;
      row.available = a.available;
    }
    return out;
  });
}
