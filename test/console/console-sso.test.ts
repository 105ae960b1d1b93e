/**
 * Single sign-on to the console in Chromium, against a real OpenID Connect provider in this
 * process (oidc-provider): "Sign in with <IdP>" runs the authorization code flow with PKCE; a
 * member of the admin group becomes the operator, another user sees their own balance and usage
 * only; a refused sign-in comes back with its reason; the session keeps the console's cookie,
 * CSRF and origin rules. Skips with a message when Chromium is not configured.
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildIdentityConfig, type IdentityConfig } from '../../src/config/identity.js';
import { userIdFor } from '../../src/http/identity/resolve-principal.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CONSOLE_CLIENT, GATEWAY_AUDIENCE, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { chromiumPath, consoleBuilt, watchForScripts } from './console-support.js';

const CHROMIUM = chromiumPath();
vi.setConfig({ testTimeout: 90_000 });

describe.skipIf(!CHROMIUM)('console sign-in through the identity provider, in Chromium', () => {
  let issuer: TestIssuer;
  let gw: TestGateway;
  let identity: IdentityConfig;
  let browser: Browser;
  let acme: string;
  const events: string[] = [];

  beforeAll(async () => {
    await consoleBuilt();
    issuer = await startTestIssuer({
      root: { email: 'root@acme.test', groups: ['switchyard-admins'] },
      alice: { email: 'alice@acme.test', groups: ['engineering'], org: 'acme' },
      dan: { email: 'dan@acme.test', groups: [], org: 'acme' },
      carol: { email: 'carol@globex.test', groups: [], org: 'globex' },
    });
    identity = buildIdentityConfig(
      {
        issuer: issuer.issuer,
        audience: GATEWAY_AUDIENCE,
        claims: { organization: 'org_id' },
        admin_groups: ['switchyard-admins'],
        console: { client_id: CONSOLE_CLIENT.id, client_secret_env: 'CONSOLE_SECRET', name: 'Acme SSO', scopes: ['openid', 'email', 'groups', 'org'] },
      },
      { CONSOLE_SECRET: CONSOLE_CLIENT.secret },
    )!;
    gw = await startTestGateway({ identity });
    issuer.allowConsoleRedirect(`${gw.url}/console/oidc/callback`);
    acme = (await gw.newAccount(5_000_000_000n, 'acme')).accountId;
    identity.organizations.acme = acme;
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await issuer?.close();
  });

  /** A browser context that reaches nothing off this machine. */
  async function loopbackOnly(): Promise<BrowserContext> {
    const context = await browser.newContext();
    await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort());
    return context;
  }

  async function signInWithIdp(login: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await loopbackOnly();
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    watchForScripts(page, events);
    await page.goto(`${gw.url}/console`);
    await page.getByTestId('sso').getByText('Sign in with Acme SSO').click();
    // The identity provider's own page.
    await page.waitForURL(`${issuer.issuer}/interaction/**`);
    await page.getByLabel('User').fill(login);
    await page.getByLabel('Password').fill('any');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/console/**`);
    return { context, page };
  }

  it('a member of the admin group signs in as the operator, with the console\'s cookie rules', async () => {
    const { context, page } = await signInWithIdp('root');
    await page.getByTestId('role').getByText('operator · root@acme.test').waitFor();
    const session = (await context.cookies()).find((c) => c.name === 'switchyard_console');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    // The operator's pages work without the admin key in the browser.
    await page.goto(`${gw.url}/console#/accounts`);
    await page.getByText('acme').first().waitFor();
    // A write still needs the session's CSRF token.
    const status = await page.evaluate(async () => (await fetch('/console/api/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' })).status);
    expect(status).toBe(403);
    // With it, the change is made, and the audit log names the operator by their IdP identity.
    const created: any = await page.evaluate(async () => {
      const session: any = await (await fetch('/console/session')).json();
      const res = await fetch('/console/api/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token }, body: '{"name":"made-through-sso"}' });
      return res.json();
    });
    const audit: any = await (await gw.admin(`/admin/audit?target_id=${created.id}`)).json();
    expect(audit.data[0]).toMatchObject({ action: 'account.create', actor: { kind: 'user', id: userIdFor(issuer.issuer, 'root') } });
    expect(audit.data[0].actor.name).toContain('root@acme.test');
    // The console's audit page shows it.
    await page.goto(`${gw.url}/console#/audit`);
    const row = page.getByTestId('audit').locator('tr', { hasText: 'made-through-sso' });
    await row.getByText('account.create').waitFor();
    await row.getByText(/root@acme\.test/).waitFor();
    await context.close();
  });

  it('another user sees their own balance and requests, and no operator page', async () => {
    // A request alice made with her token from another client, and one of another user of her account.
    const ask = async (login: string) => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${(await issuer.signIn(login)).accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(res.status).toBe(200);
      return res.headers.get('x-request-id')!;
    };
    const hers = await ask('alice');
    const his = await ask('dan');
    await gw.gateway.ledger.settled();
    const { context, page } = await signInWithIdp('alice');
    await page.getByTestId('role').getByText(`user · alice@acme.test · ${acme}`).waitFor();
    await page.getByTestId('balance').getByText(acme).waitFor();
    // Her requests (GET /v1/usage as her), and nothing of dan's.
    await page.getByTestId('my-usage').getByText(hers).waitFor();
    expect(await page.getByTestId('my-usage').getByText(his).count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Accounts' }).count()).toBe(0);
    const status = await page.evaluate(async () => (await fetch('/console/api/admin/accounts')).status);
    expect(status).toBe(403);
    // Disabled meanwhile: the session's next call is refused.
    await gw.admin(`/admin/users/${userIdFor(issuer.issuer, 'alice')}`, 'PATCH', { disabled: true });
    expect(await page.evaluate(async () => (await fetch('/console/api/v1/balance')).status)).toBe(401);
    await context.close();
  });

  it('a user the gateway has no account for comes back to the sign-in page with the reason', async () => {
    const { context, page } = await signInWithIdp('carol');
    await page.getByRole('alert').getByText('no account serves organisation "globex"').waitFor();
    expect((await context.cookies()).find((c) => c.name === 'switchyard_console')).toBeUndefined();
    await context.close();
  });

  it('a callback this browser did not start is refused (login CSRF)', async () => {
    const context = await loopbackOnly();
    const page = await context.newPage();
    await page.goto(`${gw.url}/console/oidc/callback?code=stolen&state=whatever`);
    await page.getByRole('alert').getByText('was not started here').waitFor();
    await context.close();
  });

  it('ran no script it should not have', () => {
    expect(events).toEqual([]);
  });
});
