import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { SettleRequest } from '../types.js';
import type { ExpiredLease, LeaseRenewal, LeaseState, LeaseTake } from '../statements.js';
import { pricingJson, tokenCounts } from '../rows.js';
import { toJson } from '../json.js';
import { inTransaction } from './transaction.js';

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
      const cost = s.charges.reduce((sum, c) => sum + c.cost, 0n);
      const covered = live ? (cost < lease.held ? cost : lease.held) : 0n;
      if (covered > 0n) await sql`UPDATE leases SET amount = amount - ${covered} WHERE id = ${lease.id}`.execute(trx);
      const { rows: [a] } = await sql<{ balance: bigint }>`
        UPDATE accounts SET held = held - ${covered}, balance = balance - ${cost} WHERE id = ${lease.accountId} RETURNING balance`.execute(trx);
      let balance = a.balance + cost;
      let before = 0n;
      const tokens = s.charges.map((c) => tokenCounts(c.usage));
      for (const [i, c] of s.charges.entries()) {
        before += c.cost;
        balance -= c.cost;
        const t = tokens[i];
        const reason = !live ? 'captured after its lease ended' : before > lease.held ? 'charged beyond its hold' : null;
        await sql`
          INSERT INTO journal (account_id, kind, amount, balance_after, request_id, model, cost,
            input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens, reason, created_at)
          VALUES (${lease.accountId}, 'capture', ${-c.cost}, ${balance}, ${s.requestId}, ${c.model}, ${c.cost},
            ${t.inputNoCache}, ${t.inputCacheRead}, ${t.inputCacheWrite}, ${t.output}, ${t.reasoning}, ${reason}, ${now})`.execute(trx);
      }
      const total = (f: (t: (typeof tokens)[number]) => bigint) => tokens.reduce((sum, t) => sum + f(t), 0n);
      const beyond = live ? (cost > lease.held ? cost - lease.held : 0n) : cost;
      const r = s.record;
      await sql`
        INSERT INTO usage_records (request_id, account_id, key_id, model_requested, model_served, attempts,
          input_no_cache, input_cache_read, input_cache_write, output_tokens, reasoning_tokens,
          cost, latency_ms, status, end_user, session_id, user_id, beyond_hold, pricing, lease_id, created_at)
        VALUES (${s.requestId}, ${lease.accountId}, ${r.keyId}, ${r.modelRequested}, ${r.modelServed}, ${toJson(r.attempts ?? [])},
          ${total((t) => t.inputNoCache)}, ${total((t) => t.inputCacheRead)}, ${total((t) => t.inputCacheWrite)}, ${total((t) => t.output)}, ${total((t) => t.reasoning)},
          ${cost}, ${Math.max(0, Math.round(r.latencyMs))}, ${r.status}, ${r.endUser ?? null}, ${r.session ?? null}, ${r.userId ?? null}, ${beyond},
          ${pricingJson(s.charges)}, ${lease.id}, ${now})`.execute(trx);
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
