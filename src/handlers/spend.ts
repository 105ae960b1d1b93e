import { GatewayError } from '../ir/index.js';
import { SPEND_GROUPS, type Ledger, type SpendGroup, type SpendGroupBy } from '../ledger/index.js';
import { toJsonNumber } from './json-money.js';
import type { HandlerInput, HandlerResult } from './types.js';

/** The range a summary covers when `from` is not given: 30 days before `to`. */
const DEFAULT_RANGE_MS = 30 * 24 * 60 * 60 * 1000;

/** GET /admin/spend: every account's usage, or one account's. */
export async function adminSpend(ledger: Ledger, input: HandlerInput, now = new Date()): Promise<HandlerResult> {
  const accountId = typeof input.query.account_id === 'string' ? input.query.account_id : undefined;
  return { kind: 'json', status: 200, body: await spendBody(ledger, spendParams(input.query, now), { accountId }) };
}

/** GET /v1/spend: the calling key's (or signed-in user's) own usage. */
export async function keySpend(ledger: Ledger, input: HandlerInput, now = new Date()): Promise<HandlerResult> {
  const { keyId, user } = input.auth!;
  // Exactly one of them: a scope with neither would be every account's usage.
  const scope = keyId ? { keyId } : user ? { userId: user.id } : undefined;
  if (!scope) throw new GatewayError('permission', 'GET /v1/spend needs an API key or a user\'s token');
  return { kind: 'json', status: 200, body: await spendBody(ledger, spendParams(input.query, now), scope) };
}

export interface SpendParams {
  from: Date;
  to: Date;
  groupBy: SpendGroupBy;
}

/** The query's range and grouping (the document already checked their shapes): to defaults to now, from to 30 days before. */
export function spendParams(query: Record<string, unknown>, now: Date): SpendParams {
  const to = typeof query.to === 'string' ? instant(query.to, 'to') : now;
  const from = typeof query.from === 'string' ? instant(query.from, 'from') : new Date(to.getTime() - DEFAULT_RANGE_MS);
  if (from.getTime() > to.getTime()) throw new GatewayError('invalid_request', `from (${from.toISOString()}) is after to (${to.toISOString()})`, { param: 'from' });
  const groupBy = (typeof query.group_by === 'string' ? query.group_by : 'day') as SpendGroupBy;
  if (!SPEND_GROUPS.includes(groupBy)) throw new GatewayError('invalid_request', `group_by must be one of ${SPEND_GROUPS.join(', ')}`, { param: 'group_by' });
  return { from, to, groupBy };
}

function instant(text: string, param: string): Date {
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) throw new GatewayError('invalid_request', `${param} must be an RFC 3339 time, got ${JSON.stringify(text)}`, { param });
  return d;
}

/** A summary in the API's shape (the admin API, the key holder's and the CLI). */
export async function spendBody(ledger: Ledger, p: SpendParams, scope: { accountId?: string; keyId?: string; userId?: string }) {
  const groups = await ledger.spendSummary({ ...p, ...scope });
  return { object: 'list', group_by: p.groupBy, from: p.from.toISOString(), to: p.to.toISOString(), data: groups.map(spendGroupBody) };
}

function spendGroupBody(g: SpendGroup) {
  return {
    group: g.group,
    requests: toJsonNumber(g.requests),
    input_tokens: toJsonNumber(g.inputTokens),
    output_tokens: toJsonNumber(g.outputTokens),
    cached_tokens: toJsonNumber(g.cachedTokens),
    cost: toJsonNumber(g.cost),
  };
}
