import { timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import { GatewayError } from '../../ir/index.js';
import type { Ledger } from '../../ledger/index.js';
import { loadConsoleAssets, type Asset } from './static-assets.js';
import { SessionStore, type ConsoleSession } from './sessions.js';
import type { ConsoleSso } from './sign-in-oidc.js';

export const SESSION_COOKIE = 'switchyard_console';
export const CSRF_HEADER = 'x-csrf-token';

/**
 * No inline script or style, nothing from elsewhere: the page's own bundle only. Values are
 * rendered as text by the page; this is the second line should one ever reach the DOM as markup.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** What a key holder's (or user's) session may call: their own views, nothing of other accounts. */
const KEY_HOLDER_CALLS = new Set(['GET /v1/balance', 'GET /v1/spend', 'GET /v1/usage']);

export interface ConsoleOptions {
  ledger: Ledger;
  adminKey?: string;
  sessions?: SessionStore;
  /** Reads the JSON body within the app's limits (app.ts). */
  readBody: (ctx: Koa.Context) => Promise<void>;
  assets?: Map<string, Asset>;
  /** Sign-in through the identity provider (oidc.console) in use, when configured (a reload may change it). */
  sso?: () => ConsoleSso | undefined;
}

/** Who a console call runs as, for the API behind it (app.ts): set only by this middleware. */
export interface ConsoleCaller {
  /** An operator's call: the admin API without the admin key (`user` is who, for the audit log; absent: the admin key). */
  operator?: { user?: ConsoleSession['user'] };
  /** A signed-in user's call, as their token would be. */
  auth?: ConsoleSession['auth'];
}

/**
 * The web console under /console: its static bundle, sign-in and sign-out (/console/session), and
 * /console/api/<path>, which calls the gateway's own <path> (the admin API for the operator,
 * GET /v1/balance and /v1/spend for a key holder) as the signed-in credential: the request is
 * handed on to the router with that credential, so validation, handlers and errors are the API's.
 */
export function consoleMiddleware(opts: ConsoleOptions): Koa.Middleware {
  const sessions = opts.sessions ?? new SessionStore();
  const assets = opts.assets ?? loadConsoleAssets();
  return async (ctx, next) => {
    if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) return next();
    securityHeaders(ctx);
    if (ctx.path === '/console/session') return sessionRoute(ctx, sessions, opts);
    if (ctx.path === '/console/oidc' || ctx.path.startsWith('/console/oidc/')) return ssoRoute(ctx, sessions, opts.sso?.());
    if (ctx.path.startsWith('/console/api/')) {
      ctx.set('cache-control', 'no-store');
      const session = mustHaveSession(ctx, sessions);
      const target = ctx.path.slice('/console/api'.length);
      if (/\/\.{1,2}(\/|$)|\/\//.test(target)) throw new GatewayError('not_found', `no route for ${ctx.method} ${ctx.path}`);
      const method = ctx.method.toUpperCase();
      if (method !== 'GET' && method !== 'HEAD') checkWrite(ctx, session);
      if (!allowed(session, method, target)) throw new GatewayError('permission', `the console's ${roleName(session)} session cannot call ${method} ${target}`);
      ctx.path = target;
      delete ctx.req.headers.authorization;
      if (session.role === 'operator') ctx.state.console = { operator: { user: session.user } } satisfies ConsoleCaller;
      else if (session.role === 'user') ctx.state.console = { auth: session.auth } satisfies ConsoleCaller;
      else ctx.req.headers.authorization = `Bearer ${session.key}`;
      delete ctx.req.headers['x-api-key'];
      delete ctx.req.headers.cookie;
      return next();
    }
    serveAsset(ctx, assets);
  };
}

function securityHeaders(ctx: Koa.Context): void {
  ctx.set('content-security-policy', CONSOLE_CSP);
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('x-frame-options', 'DENY');
  ctx.set('referrer-policy', 'no-referrer');
  ctx.set('cross-origin-opener-policy', 'same-origin');
}

function serveAsset(ctx: Koa.Context, assets: Map<string, Asset>): void {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new GatewayError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path} (allowed: GET, HEAD)`);
  const name = ctx.path === '/console' || ctx.path === '/console/' ? 'index.html' : ctx.path.slice('/console/'.length);
  const asset = assets.get(name);
  if (!asset) {
    if (assets.size === 0) throw new GatewayError('not_found', 'the console is not built: run `make console` (make run, test, build and pack build it)');
    throw new GatewayError('not_found', `no console file ${ctx.path}`);
  }
  ctx.status = 200;
  ctx.type = asset.contentType;
  // The page is small and changes with each build; revalidating costs one request.
  ctx.set('cache-control', 'no-cache');
  ctx.body = asset.body;
}

async function sessionRoute(ctx: Koa.Context, sessions: SessionStore, opts: ConsoleOptions): Promise<void> {
  ctx.set('cache-control', 'no-store');
  if (ctx.method === 'GET') {
    // No session is an answer, not an error: the page asks on every load, before anyone signed in.
    const session = sessions.touch(ctx.cookies.get(SESSION_COOKIE));
    ctx.status = session ? 200 : 204;
    ctx.body = session ? sessionBody(session) : null;
    return;
  }
  if (ctx.method === 'POST') {
    // Signing in needs no session, so no CSRF token; the Origin check keeps other sites from
    // signing a browser in with their key (login CSRF).
    checkOrigin(ctx);
    if (!ctx.is('application/json')) throw new GatewayError('unsupported_media_type', 'send {"key": "..."} as application/json');
    await opts.readBody(ctx);
    const key = (ctx.request as any).body?.key;
    if (typeof key !== 'string' || key.trim() === '') throw new GatewayError('invalid_request', 'key is required: the admin key or an API key', { param: 'key' });
    const session = await signIn(key.trim(), sessions, opts);
    ctx.cookies.set(SESSION_COOKIE, session.id, { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: '/console', overwrite: true });
    ctx.status = 201;
    ctx.body = sessionBody(session);
    return;
  }
  if (ctx.method === 'DELETE') {
    const session = mustHaveSession(ctx, sessions);
    checkWrite(ctx, session);
    sessions.end(session.id);
    ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: '/console', maxAge: 0, overwrite: true });
    ctx.status = 204;
    ctx.body = null;
    return;
  }
  throw new GatewayError('method_not_allowed', `${ctx.method} is not allowed on /console/session (allowed: GET, POST, DELETE)`);
}

async function signIn(key: string, sessions: SessionStore, opts: ConsoleOptions): Promise<ConsoleSession> {
  if (opts.adminKey && safeEqual(key, opts.adminKey)) return sessions.create('operator');
  const auth = await opts.ledger.authenticate(key);
  if (!auth) throw new GatewayError('authentication', 'this key is not valid (unknown, revoked or expired)');
  return sessions.create('key_holder', { key, accountId: auth.accountId });
}

function sessionBody(s: ConsoleSession) {
  return {
    role: s.role,
    csrf_token: s.csrf,
    account_id: s.accountId ?? null,
    user: s.user ? { id: s.user.id, name: s.user.name, subject: s.user.subject, groups: s.user.groups } : null,
    expires_at: new Date(Math.min(s.idleUntil, s.endsAt)).toISOString(),
  };
}

/**
 * GET /console/oidc: whether the identity provider's sign-in is offered (and its name);
 * /console/oidc/login starts it, /console/oidc/callback finishes it and returns to the console
 * signed in, or with the reason it was refused (`?sign_in_error=`), shown by the sign-in page.
 */
async function ssoRoute(ctx: Koa.Context, sessions: SessionStore, sso: ConsoleSso | undefined): Promise<void> {
  ctx.set('cache-control', 'no-store');
  if (ctx.method !== 'GET') throw new GatewayError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path} (allowed: GET)`);
  if (!sso && ctx.path === '/console/oidc') {
    // The sign-in page asks on every load: not offered is an answer, not an error.
    ctx.status = 204;
    ctx.body = null;
    return;
  }
  if (!sso) throw new GatewayError('not_found', 'sign-in through an identity provider is not configured (oidc.console)');
  if (ctx.path === '/console/oidc') {
    ctx.body = { name: sso.name, login_url: '/console/oidc/login' };
    return;
  }
  if (ctx.path === '/console/oidc/login') return sso.start(ctx);
  if (ctx.path !== '/console/oidc/callback') throw new GatewayError('not_found', `no route for GET ${ctx.path}`);
  let session: ConsoleSession;
  try {
    const error = ctx.query.error;
    if (typeof error === 'string') throw new GatewayError('authentication', `the identity provider refused the sign-in: ${error}`);
    session = await sso.finish(ctx, sessions);
  } catch (e) {
    const reason = e instanceof GatewayError ? e.message : 'the sign-in failed';
    ctx.redirect(`/console/?sign_in_error=${encodeURIComponent(reason)}`);
    return;
  }
  ctx.cookies.set(SESSION_COOKIE, session.id, { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: '/console', overwrite: true });
  ctx.redirect('/console/');
}

function mustHaveSession(ctx: Koa.Context, sessions: SessionStore): ConsoleSession {
  const session = sessions.touch(ctx.cookies.get(SESSION_COOKIE));
  if (!session) throw new GatewayError('authentication', 'not signed in, or the session has ended: sign in again');
  return session;
}

/** A write must come from the console's own page: same origin, and the session's CSRF token echoed. */
function checkWrite(ctx: Koa.Context, session: ConsoleSession): void {
  checkOrigin(ctx);
  const sent = ctx.get(CSRF_HEADER);
  if (!sent || !safeEqual(sent, session.csrf)) throw new GatewayError('permission', `missing or wrong ${CSRF_HEADER} header: reload the console`);
}

function checkOrigin(ctx: Koa.Context): void {
  const origin = ctx.get('origin');
  let host: string | undefined;
  try {
    host = origin ? new URL(origin).host : undefined;
  } catch {
    host = undefined;
  }
  if (host !== ctx.host) throw new GatewayError('permission', 'a console write must come from the console itself (Origin does not match)');
}

function allowed(session: ConsoleSession, method: string, path: string): boolean {
  if (session.role === 'operator') return path.startsWith('/admin/');
  return KEY_HOLDER_CALLS.has(`${method} ${path}`);
}

function roleName(s: ConsoleSession): string {
  return s.role === 'key_holder' ? 'key holder' : s.role;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
