import { GatewayError } from '../ir/index.js';
import type { Ledger, UserRecord } from '../ledger/index.js';
import { budgetBody, PAGE_LIMIT } from './accounts.js';
import { groupBudgets, identityBudgets, type IdentityConfig } from '../config/identity.js';
import { recordChange } from './audit.js';
import type { HandlerInput, HandlerResult } from './types.js';

export function userBody(u: UserRecord) {
  return {
    id: u.id,
    account_id: u.accountId,
    issuer: u.issuer,
    subject: u.subject,
    name: u.name,
    groups: u.groups,
    created_at: u.createdAt.toISOString(),
    last_seen_at: u.lastSeenAt.toISOString(),
    disabled_at: u.disabledAt ? u.disabledAt.toISOString() : null,
  };
}

/** A page of users in the API's shape (the admin API and the CLI). */
export async function usersPage(ledger: Ledger, q: { accountId?: string; limit: number; afterId?: string }) {
  const rows = await ledger.listUsers({ ...q, limit: q.limit + 1 });
  const data = rows.slice(0, q.limit).map(userBody);
  return { data, has_more: rows.length > q.limit, last_id: data.at(-1)?.id ?? null };
}

/** GET /admin/users */
export async function listUsers(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const raw = Number(input.query.limit ?? PAGE_LIMIT.default);
  const limit = Number.isInteger(raw) && raw > 0 ? Math.min(raw, PAGE_LIMIT.max) : PAGE_LIMIT.default;
  const accountId = typeof input.query.account_id === 'string' ? input.query.account_id : undefined;
  const afterId = typeof input.query.after_id === 'string' ? input.query.after_id : undefined;
  return { kind: 'json', status: 200, body: await usersPage(ledger, { accountId, limit, afterId }) };
}

/** PATCH /admin/users/{user_id}: disabled users are refused at once on every instance. */
export async function updateUser(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const id = input.params.user_id;
  const before = await ledger.getUser(id);
  if (!before) throw new GatewayError('not_found', `user "${id}" does not exist`, { param: 'user_id' });
  const disabled = input.body.disabled === true;
  const after = (await ledger.setUserDisabled(id, disabled))!;
  await recordChange(ledger, input, { action: disabled ? 'user.disable' : 'user.enable', targetType: 'user', targetId: id, before: userBody(before), after: userBody(after) });
  return { kind: 'json', status: 200, body: userBody(after) };
}

/** A user's budgets (their own, then each group's) in the API's shape (the admin API and the CLI). */
export async function userBudgetsBody(ledger: Ledger, identity: IdentityConfig | undefined, userId: string) {
  const user = await ledger.getUser(userId);
  if (!user) throw new GatewayError('not_found', `user "${userId}" does not exist`, { param: 'user_id' });
  const budgets = identity ? identityBudgets(identity, user.id, user.groups) : [];
  return { id: user.id, budgets: (budgets.length > 0 ? await ledger.ownedBudgetStatus(budgets) : []).map(budgetBody) };
}

/** A group's budgets (its members together) in the API's shape; a group the config does not name is a 404. */
export async function groupBudgetsBody(ledger: Ledger, identity: IdentityConfig | undefined, group: string) {
  const policy = identity?.groups[group];
  if (!policy) throw new GatewayError('not_found', `no group "${group}" in the identity policy (oidc.groups)`, { param: 'group' });
  const budgets = groupBudgets(identity!, group);
  return { id: group, budgets: (budgets.length > 0 ? await ledger.ownedBudgetStatus(budgets) : []).map(budgetBody) };
}

/** GET /admin/users/{user_id}/budgets */
export async function getUserBudgets(ledger: Ledger, identity: IdentityConfig | undefined, input: HandlerInput): Promise<HandlerResult> {
  return { kind: 'json', status: 200, body: await userBudgetsBody(ledger, identity, input.params.user_id) };
}

/** GET /admin/groups/{group}/budgets */
export async function getGroupBudgets(ledger: Ledger, identity: IdentityConfig | undefined, input: HandlerInput): Promise<HandlerResult> {
  return { kind: 'json', status: 200, body: await groupBudgetsBody(ledger, identity, input.params.group) };
}
