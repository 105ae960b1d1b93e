import type { Attribution } from '../../ir/request.js';
import type { HeaderBag } from '../types.js';

/** Claude Code names its session in this header on every request (its gateway protocol). */
export const SESSION_HEADER = 'x-claude-code-session-id';

/** Longest end user or session kept; attribution is for grouping, and a row must stay small. */
const MAX_LENGTH = 256;

/**
 * Who a request is for, as the client named it: the first non-empty string among each list of
 * candidates (the protocol's fields, most specific first). The session header, when sent, wins
 * over any body field. Undefined when the client named neither. The fields themselves still
 * travel to a same-protocol upstream.
 */
export function attributionOf(headers: HeaderBag, endUser: unknown[], session: unknown[]): Attribution | undefined {
  const pick = (values: unknown[]) => {
    const v = values.find((x): x is string => typeof x === 'string' && x.trim() !== '');
    return v === undefined ? undefined : v.slice(0, MAX_LENGTH);
  };
  const out: Attribution = {};
  const user = pick(endUser);
  const sess = pick([headers[SESSION_HEADER], ...session]);
  if (user !== undefined) out.endUser = user;
  if (sess !== undefined) out.session = sess;
  return user === undefined && sess === undefined ? undefined : out;
}
