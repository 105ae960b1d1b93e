/**
 * What Claude's desktop apps do to sign a user in with the organisation's OpenID Connect provider
 * (RFC 8252, OAuth for native apps): listen on a loopback port, open the system browser at the
 * provider's authorization endpoint with PKCE (S256) and a state, take the code at
 * `http://127.0.0.1:<port>/callback`, and exchange it at the token endpoint, with `openid-client`
 * checking the state, the issuer and the ID token. The browser here is Chromium driven by
 * playwright-core, the user typing into the provider's own sign-in form.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';

export interface DesktopTokens {
  accessToken: string;
  idToken: string;
  /** Where the provider sent the browser back. */
  redirectUri: string;
}

/** The page the loopback listener shows once the code arrived (a desktop app's "return to the app"). */
const DONE_PAGE = '<!doctype html><title>Signed in</title><p>Signed in: you can close this window and return to the app.</p>';

/**
 * Signs `login` in through `browser` as a desktop app whose public client is `clientId`; `password`
 * is what the provider's form is given. Resolves with the tokens the code was exchanged for.
 */
export async function desktopSignIn(browser: Browser, issuer: string, clientId: string, login: string, password = 'any'): Promise<DesktopTokens> {
  // An http issuer is allowed only because the test provider is on the loopback address.
  const config = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), { execute: issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : [] });
  const listener = await loopbackListener();
  const redirectUri = `http://127.0.0.1:${listener.port}/callback`;
  try {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const authorization = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email groups org',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const context = await browser.newContext();
    try {
      // The browser reaches nothing off this machine.
      await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort());
      context.setDefaultTimeout(20_000);
      const page = await context.newPage();
      await page.goto(authorization.href);
      await page.getByLabel('User').fill(login);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const callback = await Promise.race([
        listener.callback,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no redirect reached ${redirectUri}; the browser is at ${page.url()}`)), 20_000).unref()),
      ]);
      await page.getByText('you can close this window').waitFor();
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
      if (!tokens.id_token) throw new Error('the provider returned no ID token');
      return { accessToken: tokens.access_token, idToken: tokens.id_token, redirectUri };
    } finally {
      await context.close();
    }
  } finally {
    await listener.close();
  }
}

/** An HTTP listener on 127.0.0.1 (any free port) that takes one redirect to /callback. */
async function loopbackListener(): Promise<{ port: number; callback: Promise<URL>; close(): Promise<void> }> {
  let arrived!: (url: URL) => void;
  const callback = new Promise<URL>((resolve) => (arrived = resolve));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(DONE_PAGE);
    arrived(url);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    callback,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
