/**
 * A real OpenID Connect provider in this process (`oidc-provider`, a certified implementation) for
 * the identity tests: discovery, JWKS, authorization code with PKCE (a web client for the console,
 * a native one with a loopback redirect for desktop apps), JWT access tokens (RFC 9068) for the
 * gateway's audience, and ID tokens carrying the user's email, groups and organisation.
 *
 * Its sign-in page is the test's own (no external resources): any password passes, the login
 * names the user, and one submit signs in and consents. `sign` mints tokens with the issuer's own
 * key (or any other) for the attack cases.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** The gateway's audience: the resource every access token is issued for. */
export const GATEWAY_AUDIENCE = 'api://switchyard';
/** The console's client (a confidential web client). */
export const CONSOLE_CLIENT = { id: 'switchyard-console', secret: 'console-secret-for-tests' };
/** A desktop app's client (public, native: any loopback port). */
export const DESKTOP_CLIENT_ID = 'claude-desktop';

export interface TestUser {
  email: string;
  groups: string[];
  org?: string;
}

export interface SignInOptions {
  clientId?: string;
  redirectUri?: string;
  scope?: string;
  /** Ask for a refresh token too (`offline_access`, which OpenID Connect grants only with `prompt=consent`). */
  offline?: boolean;
}

export interface TestIssuer {
  /** The issuer identifier (its base URL). */
  issuer: string;
  /** The key id of the signing key the issuer publishes. */
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** Its public key as a JWK (what the JWKS publishes). */
  publicJwk: JWK;
  users: Map<string, TestUser>;
  /** A token with these claims signed by the issuer's key; `header`/`key` to forge. */
  sign(claims: Record<string, unknown>, opts?: { header?: Record<string, unknown>; key?: CryptoKey | Uint8Array; alg?: string }): Promise<string>;
  /** Sign-in of `login` through the authorization endpoint, without a browser (the same requests one makes). */
  signIn(login: string, opts?: SignInOptions): Promise<{ idToken: string; accessToken: string; refreshToken?: string }>;
  /** Where the console's client may be sent back (before the issuer's first request: a gateway's port is known only once it started). */
  allowConsoleRedirect(uri: string): void;
  /** JWKS fetches served so far. */
  jwksFetches(): number;
  close(): Promise<void>;
}

export async function startTestIssuer(users: Record<string, TestUser>): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-key-1';
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const userMap = new Map(Object.entries(users));
  const claimsOf = (sub: string) => {
    const u = userMap.get(sub);
    return { sub, email: u?.email ?? `${sub}@example.test`, groups: u?.groups ?? [], ...(u?.org ? { org_id: u.org } : {}) };
  };
  const consoleRedirects: string[] = [];
  let provider: Provider | undefined;
  const makeProvider = () => new Provider(issuer, {
    clients: [
      {
        client_id: CONSOLE_CLIENT.id,
        client_secret: CONSOLE_CLIENT.secret,
        redirect_uris: consoleRedirects.length ? consoleRedirects : ['http://127.0.0.1/console/oidc/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
      {
        client_id: DESKTOP_CLIENT_ID,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [privateJwk] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => claimsOf(sub) }),
    claims: { openid: ['sub'], email: ['email'], groups: ['groups'], org: ['org_id'] },
    scopes: ['openid', 'email', 'groups', 'org', 'offline_access'],
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => GATEWAY_AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ audience: GATEWAY_AUDIENCE, scope: 'openid email groups org', accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const sub = (token as { accountId?: string }).accountId;
      if (!sub) return undefined;
      const { email, groups, org_id } = claimsOf(sub) as { email: string; groups: string[]; org_id?: string };
      return { email, groups, ...(org_id ? { org_id } : {}) };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // The default error page loads a web font from elsewhere: a test browser must reach nothing off this machine.
    renderError: (ctx, out) => {
      ctx.type = 'text/plain';
      ctx.body = JSON.stringify(out);
    },
    ttl: { AccessToken: 600, IdToken: 600, RefreshToken: 3600, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600 },
  });
  let jwksFetches = 0;
  let callback: ReturnType<Provider['callback']> | undefined;
  server.on('request', (req, res) => {
    provider ??= makeProvider();
    callback ??= provider.callback();
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/jwks') jwksFetches++;
    const m = /^\/interaction\/([^/]+)$/.exec(url.pathname);
    if (!m) return void callback(req, res);
    void interaction(provider!, req, res, req.method === 'POST').catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  });
  return {
    issuer,
    kid,
    privateKey,
    publicKey,
    publicJwk,
    users: userMap,
    jwksFetches: () => jwksFetches,
    allowConsoleRedirect(uri) {
      if (provider) throw new Error('allowConsoleRedirect must come before the issuer\'s first request');
      consoleRedirects.push(uri);
    },
    async sign(claims, o = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, aud: GATEWAY_AUDIENCE, iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: o.alg ?? 'RS256', kid, typ: 'at+jwt', ...o.header } as any)
        .sign(o.key ?? privateKey);
    },
    signIn: (login, o = {}) => signInWithoutBrowser(issuer, login, o),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** One page: a login field; submitting it signs the user in and grants what the client asked. */
async function interaction(provider: Provider, req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, submit: boolean) {
  const details = await provider.interactionDetails(req, res);
  if (!submit) {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><title>Test IdP sign-in</title><form method="post" action="/interaction/${details.uid}">
      <label>User <input name="login" autofocus></label> <label>Password <input name="password" type="password"></label>
      <button type="submit">Sign in</button></form>`);
    return;
  }
  const body = new URLSearchParams(await new Promise<string>((resolve) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => resolve(text));
  }));
  const accountId = (details.session?.accountId as string | undefined) ?? body.get('login') ?? '';
  const params = details.params as Record<string, string>;
  const grant = details.grantId ? (await provider.Grant.find(details.grantId))! : new provider.Grant({ accountId, clientId: params.client_id });
  grant.addOIDCScope(String(params.scope ?? 'openid'));
  grant.addResourceScope(GATEWAY_AUDIENCE, 'openid email groups org');
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

/** Cookies of one sign-in, kept across its redirects. */
class CookieJar {
  private cookies = new Map<string, string>();
  take(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1));
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** The requests a browser makes for one sign-in, then the code exchanged (PKCE) at the token endpoint. */
async function signInWithoutBrowser(issuer: string, login: string, o: SignInOptions) {
  const { randomBytes, createHash } = await import('node:crypto');
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const clientId = o.clientId ?? DESKTOP_CLIENT_ID;
  const redirectUri = o.redirectUri ?? 'http://127.0.0.1:53682/callback';
  const auth = new URL('/auth', issuer);
  const scope = (o.scope ?? 'openid email groups org') + (o.offline ? ' offline_access' : '');
  Object.entries({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope, code_challenge: challenge, code_challenge_method: 'S256', state: 's1', ...(o.offline ? { prompt: 'consent' } : {}) })
    .forEach(([k, v]) => auth.searchParams.set(k, v));
  const jar = new CookieJar();
  let url = auth.toString();
  let code: string | null = null;
  for (let hop = 0; hop < 10 && !code; hop++) {
    const isInteraction = /\/interaction\/[^/]+$/.test(new URL(url).pathname);
    const res = await fetch(url, {
      method: isInteraction ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(isInteraction ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: isInteraction ? new URLSearchParams({ login, password: 'x' }).toString() : undefined,
    });
    jar.take(res);
    const location = res.headers.get('location');
    if (!location) throw new Error(`sign-in stopped at ${url}: ${res.status} ${await res.text()}`);
    const next = new URL(location, url);
    if (next.toString().startsWith(redirectUri)) code = next.searchParams.get('code');
    url = next.toString();
  }
  if (!code) throw new Error('sign-in did not return a code');
  const tokenRes = await fetch(new URL('/token', issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier }).toString(),
  });
  const tokens = (await tokenRes.json()) as { id_token: string; access_token: string; refresh_token?: string };
  if (!tokenRes.ok) throw new Error(`token endpoint: ${JSON.stringify(tokens)}`);
  return { idToken: tokens.id_token, accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
}
