import { GatewayError } from '../ir/index.js';
import type { Actor, AuditChange, AuditEntry, Ledger } from '../ledger/index.js';
import type { HandlerInput, HandlerResult } from './types.js';

/** Records an admin change made through this request (after it succeeded), as its actor. */
export async function recordChange(ledger: Ledger, input: HandlerInput, change: Omit<AuditChange, 'actor' | 'requestId'>): Promise<void> {
  await ledger.audit({ ...change, actor: input.actor ?? { kind: 'admin_key' }, requestId: input.requestId });
}

export function auditBody(e: AuditEntry) {
  return {
    id: Number(e.id),
    actor: { kind: e.actor.kind, id: e.actor.id ?? null, name: e.actor.name ?? null },
    action: e.action,
    target_type: e.targetType,
    target_id: e.targetId ?? null,
    before: e.before ?? null,
    after: e.after ?? null,
    request_id: e.requestId ?? null,
    created_at: e.createdAt.toISOString(),
  };
}

/** An entry id as `before_id` (the document checked its digits): within bigint. */
function auditCursor(v: string): bigint {
  const id = BigInt(v);
  if (id > 2n ** 63n - 1n) throw new GatewayError('invalid_request', 'before_id must be an audit entry id', { param: 'before_id' });
  return id;
}

const text = (v: unknown) => (typeof v === 'string' ? v : undefined);

function instant(v: unknown, param: string): Date | undefined {
  if (typeof v !== 'string') return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw new GatewayError('invalid_request', `${param} must be an RFC 3339 time`, { param });
  return d;
}

/** GET /admin/audit: newest first, filtered, a page at a time. */
export async function listAudit(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const q = input.query;
  const raw = Number(q.limit ?? 100);
  const limit = Number.isInteger(raw) && raw > 0 ? Math.min(raw, 1000) : 100;
  const entries = await ledger.listAudit({
    actorId: text(q.actor_id),
    actorKind: text(q.actor_kind) as Actor['kind'] | undefined,
    action: text(q.action),
    targetType: text(q.target_type),
    targetId: text(q.target_id),
    from: instant(q.from, 'from'),
    to: instant(q.to, 'to'),
    beforeId: typeof q.before_id === 'string' ? auditCursor(q.before_id) : undefined,
    limit: limit + 1,
  });
  const data = entries.slice(0, limit).map(auditBody);
  return { kind: 'json', status: 200, body: { data, has_more: entries.length > limit, last_id: data.at(-1)?.id ?? null } };
}
