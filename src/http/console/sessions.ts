import { randomBytes } from 'node:crypto';
import type { KeyAuth, UserPrincipal } from '../../ledger/index.js';

/**
 * Who signed in: the operator (the admin key, or a member of an admin group through the identity
 * provider), a key holder (one API key, one account) or a user (signed in through the identity
 * provider, not an operator: their own balance, budgets and usage).
 */
export type ConsoleRole = 'operator' | 'key_holder' | 'user';

/** What a session carries besides its role. */
export interface SessionDetails {
  /** A key holder's own key, kept here so each call is authenticated as the key (revoked = signed out). */
  key?: string;
  accountId?: string;
  /** Who signed in through the identity provider (operators and users). */
  user?: UserPrincipal;
  /** A user's credential as the API sees it (account, allowed models, limits). */
  auth?: KeyAuth;
}

export interface ConsoleSession {
  id: string;
  role: ConsoleRole;
  /** Echoed by the page in `x-csrf-token` on every write; never in a cookie. */
  csrf: string;
  key?: string;
  accountId?: string;
  user?: UserPrincipal;
  auth?: KeyAuth;
  /** Epoch ms: the session ends at the first of its idle and absolute deadlines. */
  idleUntil: number;
  endsAt: number;
}

export interface SessionTimes {
  /** A session unused for this long ends (default 30 minutes). */
  idleMs: number;
  /** A session ends this long after sign-in whatever its use (default 8 hours). */
  maxMs: number;
}

export const DEFAULT_SESSION_TIMES: SessionTimes = { idleMs: 30 * 60_000, maxMs: 8 * 3_600_000 };

const token = () => randomBytes(32).toString('base64url');

/**
 * Console sessions, in this process's memory: a session id is an opaque random value the cookie
 * carries, and what it stands for stays here. A restart signs everyone out, and behind a load
 * balancer a session lives on the instance that made it (spec/DECISIONS.md, "Console").
 */
export class SessionStore {
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly times: SessionTimes = DEFAULT_SESSION_TIMES,
    private readonly now: () => number = Date.now,
  ) {}

  create(role: ConsoleRole, details: SessionDetails = {}): ConsoleSession {
    this.sweep();
    const t = this.now();
    const session: ConsoleSession = { id: token(), csrf: token(), role, ...details, idleUntil: t + this.times.idleMs, endsAt: t + this.times.maxMs };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id (its idle deadline pushed back), or undefined. */
  touch(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const t = this.now();
    if (t >= s.idleUntil || t >= s.endsAt) {
      this.sessions.delete(id);
      return undefined;
    }
    s.idleUntil = Math.min(t + this.times.idleMs, s.endsAt);
    return s;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }

  /** Drops expired sessions (on each sign-in, so the map holds only live ones and recent leftovers). */
  private sweep(): void {
    const t = this.now();
    for (const [id, s] of this.sessions) if (t >= s.idleUntil || t >= s.endsAt) this.sessions.delete(id);
  }
}
