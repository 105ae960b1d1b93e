import { sql } from 'kysely';
import { toJson } from './json.js';
import type { LedgerStatements } from './statements.js';
import type { UserPrincipal } from './types.js';

/** A user signed in through the identity provider, as the admin API shows them. */
export interface UserRecord {
  id: string;
  accountId: string;
  issuer: string;
  subject: string;
  name: string | null;
  groups: string[];
  createdAt: Date;
  lastSeenAt: Date;
  disabledAt: Date | null;
}

type UserRow = {
  id: string;
  account_id: string;
  issuer: string;
  subject: string;
  name: string | null;
  groups: unknown;
  created_at: Date;
  last_seen_at: Date;
  disabled_at: Date | null;
};

function toUserRecord(r: UserRow): UserRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    issuer: r.issuer,
    subject: r.subject,
    name: r.name,
    groups: Array.isArray(r.groups) ? (r.groups as string[]) : [],
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    disabledAt: r.disabled_at,
  };
}

/**
 * Records a user on first sight (under `accountId`), or their latest name, groups and sighting;
 * one statement, so instances seeing a new user at once insert it once. The row as it stands
 * after: its account is the one they were first seen under, and `disabledAt` says whether they may in.
 */
export async function seeUser(s: LedgerStatements, user: UserPrincipal, accountId: string): Promise<UserRecord> {
  const now = s.now();
  const row = await s.db
    .insertInto('users')
    .values({ id: user.id, account_id: accountId, issuer: user.issuer, subject: user.subject, name: user.name, groups: toJson(user.groups), created_at: now, last_seen_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ name: user.name, groups: toJson(user.groups), last_seen_at: now }))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toUserRecord(row as UserRow);
}

export async function getUser(s: LedgerStatements, id: string): Promise<UserRecord | undefined> {
  const row = await s.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toUserRecord(row as UserRow);
}

/** Users by id, a page at a time (`afterId` for the next), of one account or all. */
export async function listUsers(s: LedgerStatements, q: { accountId?: string; limit: number; afterId?: string }): Promise<UserRecord[]> {
  let query = s.db.selectFrom('users').selectAll().orderBy('id').limit(q.limit);
  if (q.accountId !== undefined) query = query.where('account_id', '=', q.accountId);
  if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
  return (await query.execute()).map((r) => toUserRecord(r as UserRow));
}

/** Disables (keeping the first time) or enables a user; undefined when unknown. */
export async function setUserDisabled(s: LedgerStatements, id: string, disabled: boolean): Promise<UserRecord | undefined> {
  // On PostgreSQL the database announces it to every instance (the leases migration's trigger).
  const row = await s.db
    .updateTable('users')
    .set({ disabled_at: disabled ? sql<Date>`coalesce(disabled_at, ${s.now()})` : null })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row && toUserRecord(row as UserRow);
}
