import { GatewayError } from '../ir/index.js';
import type { Ledger } from '../ledger/index.js';
import { usagePage } from './accounts.js';
import type { HandlerInput, HandlerResult } from './types.js';

/** Records per page when `limit` is absent, as OpenAI's lists. */
const DEFAULT_LIMIT = 20;

/**
 * GET /v1/usage: the calling key's (or the token's user's) own requests, newest first, a page at a
 * time (the document already checked the parameters' shapes), filtered by time, model and session.
 */
export async function listOwnUsage(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const { keyId, user } = input.auth!;
  // Exactly one of them: a scope with neither would be the whole account's requests.
  const scope = keyId ? { keyId } : user ? { userId: user.id } : undefined;
  if (!scope) throw new GatewayError('permission', "GET /v1/usage needs an API key or a user's token");
  const auth = input.auth!;
  const q = input.query;
  const text = (name: string) => (typeof q[name] === 'string' ? (q[name] as string) : undefined);
  const from = instant(text('from'), 'from');
  const to = instant(text('to'), 'to');
  if (from && to && from.getTime() > to.getTime()) throw new GatewayError('invalid_request', `from (${from.toISOString()}) is after to (${to.toISOString()})`, { param: 'from' });
  const filter = { ...scope, model: text('model'), session: text('session'), from, to };
  const limit = q.limit === undefined ? DEFAULT_LIMIT : Number(q.limit);
  return { kind: 'json', status: 200, body: await usagePage(ledger, auth.accountId, limit, text('before_id'), withoutUndefined(filter)) };
}

function instant(text: string | undefined, param: string): Date | undefined {
  if (text === undefined) return undefined;
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) throw new GatewayError('invalid_request', `${param} must be an RFC 3339 time, got ${JSON.stringify(text)}`, { param });
  return d;
}

function withoutUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
