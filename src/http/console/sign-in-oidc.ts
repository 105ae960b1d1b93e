import type Koa from 'koa';
import * as oidc from 'openid-client';
import type { IdentityConfig } from '../../config/identity.js';
import { GatewayError } from '../../ir/index.js';
import type { Catalog } from '../../routing/catalog.js';
import { resolvePrincipal } from '../identity/resolve-principal.js';
import type { ConsoleSession, SessionStore } from './sessions.js';

/** Carries one sign-in from the console to the identity provider and back (SameSite=Lax: the way back is a cross-site redirect). */
export const LOGIN_COOKIE = 'switchyard_console_login';
/** A sign-in not finished within this is forgotten. */
const LOGIN_TTL_MS = 10 * 60_000;
const MAX_PENDING = 10_000;

interface PendingLogin {
  verifier: string;
  state: string;
  nonce: string;
  redirectUri: string;
  expiresAt: number;
}

export interface ConsoleSso {
  /** What the sign-in page shows ("Sign in with <name>"). */
  name: string;
  /** GET /console/oidc/login: to the identity provider, with PKCE, state and nonce. */
  start(ctx: Koa.Context): Promise<void>;
  /** GET /console/oidc/callback: the code exchanged, the ID token checked, a session made. */
  finish(ctx: Koa.Context, sessions: SessionStore): Promise<ConsoleSession>;
}

/**
 * Single sign-on to the console: the authorization code flow with PKCE (RFC 7636) through
 * `openid-client`, which checks the ID token (signature, iss, aud = the console's client, nonce,
 * exp). Members of an admin group get the operator role; everyone else the user role, which sees
 * their own balance, budgets and usage. Pending sign-ins live in this process's memory, as
 * sessions do.
 */
export function consoleSso(identity: IdentityConfig, catalog: () => Catalog, now: () => number = Date.now): ConsoleSso | undefined {
  const client = identity.console;
  if (!client) return undefined;
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    discovered ??= oidc
      .discovery(new URL(identity.issuer), client.clientId, client.clientSecret, undefined, insecureLoopback(identity.issuer))
      .catch((e) => {
        discovered = undefined;
        throw new GatewayError('unavailable', 'the identity provider cannot be reached now; retry shortly', { retryAfter: 5, cause: e });
      });
    return discovered;
  };
  const pending = new Map<string, PendingLogin>();
  const sweep = () => {
    for (const [id, p] of pending) if (p.expiresAt <= now()) pending.delete(id);
  };
  return {
    name: client.name,
    async start(ctx) {
      const config = await configuration();
      sweep();
      if (pending.size >= MAX_PENDING) throw new GatewayError('unavailable', 'too many sign-ins under way; retry shortly', { retryAfter: 5 });
      const login: PendingLogin = {
        verifier: oidc.randomPKCECodeVerifier(),
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        redirectUri: `${ctx.protocol}://${ctx.host}/console/oidc/callback`,
        expiresAt: now() + LOGIN_TTL_MS,
      };
      const id = oidc.randomState();
      pending.set(id, login);
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: login.redirectUri,
        scope: client.scopes.join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(login.verifier),
        code_challenge_method: 'S256',
        state: login.state,
        nonce: login.nonce,
      });
      ctx.cookies.set(LOGIN_COOKIE, id, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/console/oidc', maxAge: LOGIN_TTL_MS, overwrite: true });
      ctx.set('cache-control', 'no-store');
      ctx.redirect(url.href);
    },
    async finish(ctx, sessions) {
      const id = ctx.cookies.get(LOGIN_COOKIE);
      const login = id ? pending.get(id) : undefined;
      if (id) pending.delete(id);
      ctx.cookies.set(LOGIN_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/console/oidc', maxAge: 0, overwrite: true });
      if (!login || login.expiresAt <= now()) throw new GatewayError('authentication', 'this sign-in was not started here or took too long: sign in again');
      const config = await configuration();
      let claims: oidc.IDToken | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, new URL(ctx.href.replace(/^[^?]*/, login.redirectUri)), {
          pkceCodeVerifier: login.verifier,
          expectedState: login.state,
          expectedNonce: login.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
      } catch (e) {
        throw new GatewayError('authentication', `the identity provider's answer was refused: ${(e as Error).message}`, { cause: e });
      }
      if (!claims) throw new GatewayError('authentication', 'the identity provider sent no ID token');
      const groups = groupsOf(claims, identity);
      if (groups.some((g) => identity.adminGroups.includes(g))) {
        const user = resolveForOperator(claims, identity, catalog());
        return sessions.create('operator', { user });
      }
      const auth = resolvePrincipal(claims, identity, catalog());
      return sessions.create('user', { accountId: auth.accountId, user: auth.user, auth });
    },
  };
}

function groupsOf(claims: oidc.IDToken, identity: IdentityConfig): string[] {
  const v = claims[identity.claims.groups];
  return Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : typeof v === 'string' ? v.split(/[\s,]+/) : [];
}

/** An operator needs no account: who they are is what the audit log records. */
function resolveForOperator(claims: oidc.IDToken, identity: IdentityConfig, catalog: Catalog) {
  try {
    return resolvePrincipal(claims, identity, catalog).user!;
  } catch (e) {
    if (!(e instanceof GatewayError) || e.kind !== 'permission') throw e;
    return resolvePrincipal(claims, { ...identity, defaultAccount: 'acct_none' }, catalog).user!;
  }
}

/** openid-client speaks only HTTPS; a plain-HTTP issuer is allowed on the loopback address alone (a local IdP, the tests). */
function insecureLoopback(issuer: string): oidc.DiscoveryRequestOptions | undefined {
  const url = new URL(issuer);
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  return url.protocol === 'http:' && loopback ? { execute: [oidc.allowInsecureRequests] } : undefined;
}
