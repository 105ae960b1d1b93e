import { toJson } from './json.js';
import type { LedgerStatements } from './statements.js';

/** Who made a change: the admin key, a user signed in through the identity provider, the CLI, or the gateway itself (a reload). */
export interface Actor {
  kind: 'admin_key' | 'user' | 'cli' | 'system';
  /** A user's id (`usr_…`); absent for the others. */
  id?: string;
  /** A user's name and IdP subject, the CLI's OS user, the signal: for people to read. */
  name?: string;
}

export interface AuditChange {
  actor: Actor;
  /** `account.create`, `account.credit`, `key.create`, `key.update`, `key.revoke`, `user.disable`, `user.enable`, `config.reload`. */
  action: string;
  targetType: 'account' | 'key' | 'user' | 'config';
  targetId?: string | null;
  /** The values before and after (what the admin API shows), never a secret. */
  before?: unknown;
  after?: unknown;
  requestId?: string | null;
}

export interface AuditEntry extends AuditChange {
  id: bigint;
  createdAt: Date;
}

export interface AuditFilter {
  actorId?: string;
  actorKind?: Actor['kind'];
  action?: string;
  targetType?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
  limit: number;
  /** The next page: entries older than this id. */
  beforeId?: bigint;
}

/** Appends one change; the table refuses UPDATE and DELETE (a trigger on each database). */
export async function appendAudit(s: LedgerStatements, c: AuditChange): Promise<void> {
  await s.db
    .insertInto('audit_log')
    .values({
      actor_kind: c.actor.kind,
      actor_id: c.actor.id ?? null,
      actor_name: c.actor.name ?? null,
      action: c.action,
      target_type: c.targetType,
      target_id: c.targetId ?? null,
      before: c.before === undefined ? null : toJson(c.before),
      after: c.after === undefined ? null : toJson(c.after),
      request_id: c.requestId ?? null,
      created_at: s.now(),
    })
    .execute();
}

/** Newest first, filtered. */
export async function listAudit(s: LedgerStatements, f: AuditFilter): Promise<AuditEntry[]> {
  let q = s.db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(f.limit);
  if (f.actorId !== undefined) q = q.where('actor_id', '=', f.actorId);
  if (f.actorKind !== undefined) q = q.where('actor_kind', '=', f.actorKind);
  if (f.action !== undefined) q = q.where('action', '=', f.action);
  if (f.targetType !== undefined) q = q.where('target_type', '=', f.targetType);
  if (f.targetId !== undefined) q = q.where('target_id', '=', f.targetId);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<', f.to);
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  const rows = await q.execute();
  return rows.map((r) => ({
    id: BigInt(r.id),
    actor: { kind: r.actor_kind, ...(r.actor_id !== null && { id: r.actor_id }), ...(r.actor_name !== null && { name: r.actor_name }) },
    action: r.action,
    targetType: r.target_type as AuditChange['targetType'],
    targetId: r.target_id,
    before: r.before ?? null,
    after: r.after ?? null,
    requestId: r.request_id,
    createdAt: r.created_at,
  }));
}
