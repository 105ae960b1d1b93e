/**
 * What Claude's desktop apps do, against a real OpenID Connect provider in this process
 * (oidc-provider): a browser sign-in with a loopback redirect and PKCE (test/support/desktop-sign-in.ts:
 * openid-client, the provider's form filled in Chromium), then the user's token on each request
 * through the official SDKs on all three protocols. The usage is the user's: the admin API lists
 * it under their id, and their own `GET /v1/usage` shows it. Skipped without Chromium, as the
 * console's browser suites are (test/support/chromium-setup.ts says so once).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildIdentityConfig, type IdentityConfig } from '../../src/config/identity.js';
import { userIdFor } from '../../src/http/identity/resolve-principal.js';
import { findChromium } from '../../tools/find-chromium.js';
import { desktopSignIn } from '../support/desktop-sign-in.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { DESKTOP_CLIENT_ID, GATEWAY_AUDIENCE, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';

const CHROMIUM = findChromium();
vi.setConfig({ testTimeout: 90_000 });

describe.skipIf(!CHROMIUM)('a desktop app signs its user in (loopback redirect, PKCE) and sends their token', () => {
  let issuer: TestIssuer;
  let gw: TestGateway;
  let browser: Browser;
  let acme: string;

  beforeAll(async () => {
    issuer = await startTestIssuer({ frank: { email: 'frank@acme.test', groups: ['engineering'], org: 'acme' } });
    // The app's ID token is for its own client id: the gateway lists it among the audiences.
    const identity: IdentityConfig = buildIdentityConfig(
      { claims: { organization: 'org_id' } },
      { SWITCHYARD_OIDC_ISSUER: issuer.issuer, SWITCHYARD_OIDC_AUDIENCE: `${GATEWAY_AUDIENCE},${DESKTOP_CLIENT_ID}` },
    )!;
    gw = await startTestGateway({ identity });
    acme = (await gw.newAccount(10_000_000_000n, 'acme')).accountId;
    identity.organizations.acme = acme;
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await issuer?.close();
  });

  it('signs in through the browser, then every request on the three protocols carries the token and is the user\'s', async () => {
    const tokens = await desktopSignIn(browser, issuer.issuer, DESKTOP_CLIENT_ID, 'frank');
    expect(tokens.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const ids: string[] = [];
    const hi = [{ role: 'user' as const, content: 'Hi' }];
    // The access token (audience: the gateway) and the ID token (audience: the app), each on all three protocols.
    for (const token of [tokens.accessToken, tokens.idToken]) {
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: token, maxRetries: 0 });
      const chat = await openai.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: hi }).withResponse();
      expect(chat.data.choices[0].message.content).toBeTruthy();
      const responses = await openai.responses.create({ model: 'local-haiku', max_output_tokens: 16, input: 'Hi' }).withResponse();
      expect(responses.data.output_text).toBeTruthy();
      const anthropic = new Anthropic({ baseURL: gw.url, authToken: token, apiKey: null, maxRetries: 0 });
      const messages = await anthropic.messages.create({ model: 'local-haiku', max_tokens: 5, messages: hi }).withResponse();
      expect(messages.data.type).toBe('message');
      ids.push(...[chat, responses, messages].map((r) => r.response.headers.get('x-request-id')!));
    }
    await gw.gateway.ledger.settled();

    const frank = userIdFor(issuer.issuer, 'frank');
    const listed: any = await (await gw.admin(`/admin/accounts/${acme}/usage?user_id=${frank}&limit=100`)).json();
    expect(listed.data.map((r: any) => r.request_id).sort()).toEqual([...ids].sort());
    expect(listed.data.every((r: any) => r.user_id === frank && r.cost > 0)).toBe(true);
    const own: any = await (await fetch(`${gw.url}/v1/usage?limit=100`, { headers: { authorization: `Bearer ${tokens.idToken}` } })).json();
    expect(own.data.map((r: any) => r.request_id).sort()).toEqual([...ids].sort());
  });
});
