import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { SettleRequest } from '../types.js';
import type { ExpiredLease, LeaseRenewal, LeaseState, LeaseTake } from '../statements.js';
import { inTransaction } from './transaction.js';
import { chargedTotal } from '../settle.js';
import { recordCaptures } from './settle.js';

/**
 * The lease statements on SQLite (the rules: leases.ts), each one transaction holding the write
 * lock from BEGIN, so what it reads stays true until it commits; the moves are PostgreSQL's.
 */

export function takeLease(db: Kysely<Database>, l: LeaseTake): Promise<{ available: bigint } | undefined> {
  return inTransaction(db, async (trx) => {
    const need = l.need > l.amount ? l.need : l.amount;
    const { rows: [a] } = await sql<{ available: bigint }>`
      UPDATE accounts SET held = held + ${l.amount} WHERE id = ${l.accountId} AND balance - held >= ${need}
      RETURNING balance - held AS available`.execute(trx);
    if (!a) return undefined;
    await sql`INSERT INTO leases (id, account_id, instance, amount, expires_at) VALUES (${l.id}, ${l.accountId}, ${l.instance}, ${l.amount}, ${Date.now() + l.ttlMs})`.execute(trx);
    return a;
  });
}

export function renewLease(db: Kysely<Database>, r: LeaseRenewal): Promise<{ changed: boolean } | undefined> {
  return inTransaction(db, async (trx) => {
    const { rows: [l] } = await sql<{ account_id: string; amount: bigint }>`
      SELECT account_id, amount FROM leases WHERE id = ${r.id} AND status = 'active'`.execute(trx);
    if (!l) return undefined;
    let changed = false;
    if (r.grow !== 0n && l.amount + r.grow >= 0n) {
      const need = r.need > r.grow ? r.need : r.grow;
      const { rows } = await sql`
        UPDATE accounts SET held = held + ${r.grow} WHERE id = ${l.account_id} AND (${r.grow < 0n ? 1 : 0} = 1 OR balance - held >= ${need})
        RETURNING id`.execute(trx);
      changed = rows.length > 0;
    }
    await sql`
      UPDATE leases SET amount = amount + ${changed ? r.grow : 0n}, expires_at = ${Date.now() + r.ttlMs}, in_flight = ${r.inFlight}, in_use = ${r.inUse}
      WHERE id = ${r.id}`.execute(trx);
    return { changed };
  });
}

export function endLease(db: Kysely<Database>, leaseId: string): Promise<bigint | undefined> {
  return inTransaction(db, async (trx) => {
    const { rows: [l] } = await sql<{ account_id: string; amount: bigint }>`
      SELECT account_id, amount FROM leases WHERE id = ${leaseId} AND status = 'active'`.execute(trx);
    if (!l) return undefined;
    await sql`UPDATE leases SET status = 'returned', amount = 0, in_flight = 0, in_use = 0, resolved_at = ${Date.now()} WHERE id = ${leaseId}`.execute(trx);
    await sql`UPDATE accounts SET held = held - ${l.amount} WHERE id = ${l.account_id}`.execute(trx);
    return l.amount;
  });
}

/** The batch (see postgres/leases.ts): per request, in request id order, each account's journal chained as it goes. */
export function settleLeased(db: Kysely<Database>, items: SettleRequest[], leases: LeaseState[]): Promise<{ written: string[]; ended: string[] }> {
  return inTransaction(db, async (trx) => {
    const now = new Date();
    const written: string[] = [];
    const ended = new Set<string>();
    const active = new Map<string, boolean>();
    const states = new Map(leases.map((l) => [l.id, l]));
    for (const s of [...items].sort((a, b) => (a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0))) {
      const lease = s.lease!;
      const { rows: done } = await sql`SELECT 1 FROM usage_records WHERE request_id = ${s.requestId}`.execute(trx);
      if (done.length > 0) continue;
      if (!active.has(lease.id)) {
        const { rows } = await sql`SELECT 1 FROM leases WHERE id = ${lease.id} AND status = 'active'`.execute(trx);
        active.set(lease.id, rows.length > 0);
        const state = states.get(lease.id);
        if (rows.length > 0 && state) await sql`UPDATE leases SET in_flight = ${state.inFlight}, in_use = ${state.inUse} WHERE id = ${lease.id}`.execute(trx);
      }
      const live = active.get(lease.id)!;
      if (!live) ended.add(lease.id);
      const cost = chargedTotal(s.charges);
      const covered = live ? (cost < lease.held ? cost : lease.held) : 0n;
      if (covered > 0n) await sql`UPDATE leases SET amount = amount - ${covered} WHERE id = ${lease.id}`.execute(trx);
      const { rows: [a] } = await sql<{ balance: bigint }>`
        UPDATE accounts SET held = held - ${covered}, balance = balance - ${cost} WHERE id = ${lease.accountId} RETURNING balance`.execute(trx);
      const beyond = live ? (cost > lease.held ? cost - lease.held : 0n) : cost;
      const late = live ? undefined : 'captured after its lease ended';
      await recordCaptures(trx, s, { accountId: lease.accountId, balanceAfter: a.balance, held: lease.held, late, beyond, leaseId: lease.id, now });
      written.push(s.requestId);
    }
    return { written, ended: [...ended] };
  });
}

export function reapLeases(db: Kysely<Database>, now: Date | undefined, batch: number): Promise<ExpiredLease[]> {
  return inTransaction(db, async (trx) => {
    const at = Date.now();
    const { rows } = await sql<ExpiredLease>`
      UPDATE leases SET status = 'expired', resolved_at = ${at}
      WHERE id IN (SELECT id FROM leases WHERE status = 'active' AND expires_at <= ${now?.getTime() ?? at} ORDER BY expires_at LIMIT ${batch})
      RETURNING id, account_id, instance, amount, in_flight`.execute(trx);
    for (const l of rows) await sql`UPDATE accounts SET held = held - ${l.amount} WHERE id = ${l.account_id}`.execute(trx);
    return rows;
  });
}

export async function leasedElsewhere(db: Kysely<Database>, accountId: string, instance: string): Promise<bigint> {
  const { rows } = await sql<{ amount: bigint }>`
    SELECT coalesce(sum(amount), 0) AS amount FROM leases WHERE account_id = ${accountId} AND status = 'active' AND instance <> ${instance}`.execute(db);
  return BigInt(rows[0].amount);
}
