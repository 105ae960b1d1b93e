/**
 * The web console in a real browser: Playwright drives the system's Chromium (CHROMIUM_PATH)
 * against the real server, whose requests go through the official OpenAI SDK to the fake upstream.
 * An operator signs in, creates an account, credits it, creates a key; a request with that key
 * shows in the usage table and the spend chart; the key is revoked. A key holder sees only their
 * own key's figures and requests. Hostile end users, sessions and names are shown as text and never run; a write
 * without the CSRF token is refused. Skips with a message when Chromium is not configured.
 */
import OpenAI from 'openai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LocalDeploymentHealth } from '../../src/routing/health/index.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { chromiumPath, consoleBuilt, signIn, watchForScripts } from './console-support.js';

const CHROMIUM = chromiumPath();
// Each test is a few seconds alone; the margin is for a machine loaded by the whole suite.
vi.setConfig({ testTimeout: 90_000 });

/** Text that would run script if it ever reached the page as markup. */
const HOSTILE_USER = '<img src=x onerror="window.__pwned=1;alert(1)">';
const HOSTILE_SESSION = '<script>window.__pwned=2</script>';
const HOSTILE_NAME = '<svg/onload=window.__pwned=3>';

describe.skipIf(!CHROMIUM)('the web console in Chromium', () => {
  let fake: FakeUpstream;
  let gw: TestGateway;
  let browser: Browser;
  let operator: BrowserContext;
  let page: Page;
  /** Dialogs, page errors and policy violations (watchForScripts): none expected. */
  const dialogs: string[] = [];
  let secret = '';
  let accountId = '';
  const health = new LocalDeploymentHealth();

  beforeAll(async () => {
    await consoleBuilt();
    fake = await startFakeUpstream();
    gw = await startTestGateway({ catalog: fakeCatalog(fake), health });
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    operator = await browser.newContext();
    // A missing element fails in seconds with its selector, not at the test's timeout.
    operator.setDefaultTimeout(20_000);
    page = await operator.newPage();
    watchForScripts(page, dialogs);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await health.close();
    await fake?.close();
  });

  it('loads the sign-in page with no failed request and no error in the browser console (icon, session, identity provider)', async () => {
    const visitor = await browser.newContext();
    try {
      const fresh = await visitor.newPage();
      const failures: string[] = [];
      fresh.on('response', (r) => {
        if (r.status() >= 400) failures.push(`${r.status()} ${r.url()}`);
      });
      fresh.on('requestfailed', (r) => failures.push(`failed ${r.url()}`));
      fresh.on('console', (m) => {
        if (m.type() === 'error') failures.push(`console: ${m.text()}`);
      });
      await fresh.goto(`${gw.url}/console`);
      await fresh.getByTestId('sign-in').waitFor();
      // The icon is fetched after the page; let it settle.
      await fresh.waitForLoadState('networkidle');
      expect(failures).toEqual([]);
      expect((await fetch(`${gw.url}/console/favicon.svg`)).headers.get('content-type')).toBe('image/svg+xml');
    } finally {
      await visitor.close();
    }
  });

  it('serves the page with a strict policy and signs the operator in with an HttpOnly, SameSite=Strict cookie', async () => {
    const res = await page.goto(`${gw.url}/console`);
    expect(res!.status()).toBe(200);
    const csp = res!.headers()['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    await signIn(page, 'wrong-key');
    await page.getByRole('alert').getByText('this key is not valid').waitFor();
    await signIn(page, gw.adminKey);
    await page.getByTestId('role').getByText('operator').waitFor();
    const [cookie] = await operator.cookies();
    expect(cookie).toMatchObject({ name: 'switchyard_console', httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookie!.value).not.toContain(gw.adminKey);
    expect(await page.evaluate(() => { const w = globalThis as any; return JSON.stringify({ ...w.localStorage }) + JSON.stringify({ ...w.sessionStorage }) + w.document.cookie; })).not.toContain(gw.adminKey);
  });

  it('creates an account, credits it and creates a key whose secret is shown once', async () => {
    await page.goto(`${gw.url}/console#/accounts`);
    const create = page.getByTestId('create-account');
    await create.getByLabel('Name').fill(HOSTILE_NAME);
    await create.getByRole('button', { name: 'Create account' }).click();
    const note = await create.locator('.note').textContent();
    accountId = /\((acct_[^)]+)\)/.exec(note ?? '')![1]!;
    await page.getByTestId('accounts').getByRole('link', { name: HOSTILE_NAME }).click();
    await page.getByTestId('account').getByText(accountId).waitFor();

    const credits = page.getByTestId('add-credits');
    await credits.getByLabel(/^Amount/).fill('5');
    await credits.getByLabel('Reason').fill('console test');
    await credits.getByRole('button', { name: 'Add credits' }).click();
    await page.getByTestId('account').getByText('$5.00').first().waitFor();
    await page.getByTestId('ledger').getByText('console test').waitFor();
    // A page at a time: 50 entries, then the older ones on demand.
    for (let i = 1; i <= 50; i++) expect((await gw.admin(`/admin/accounts/${accountId}/credits`, 'POST', { amount: 1, reason: `bulk-${i}` })).status).toBe(200);
    await page.reload();
    const ledger = page.getByTestId('ledger');
    await ledger.getByText('bulk-50').waitFor();
    expect(await ledger.locator('tbody tr').count()).toBe(50);
    await page.getByRole('button', { name: 'Older' }).click();
    await ledger.getByText('console test').waitFor();
    expect(await ledger.locator('tbody tr').count()).toBe(51);
    expect(await page.getByRole('button', { name: 'Older' }).count()).toBe(0);

    await page.getByText('New key').click();
    const form = page.getByTestId('create-key');
    // A model name the catalog does not know: the error quoting it is text.
    await form.getByLabel('Name').fill(HOSTILE_NAME);
    await form.getByLabel(/^Models/).fill(HOSTILE_NAME);
    await form.getByRole('button', { name: 'Create key' }).click();
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toContain(HOSTILE_NAME);
    await form.getByLabel('Name').fill('ci-key');
    await form.getByLabel(/^Models/).fill('');
    await form.getByLabel('Requests per minute').fill('600');
    await form.getByLabel('Budget per day ($)').fill('2');
    await form.getByLabel('Expires (UTC)').fill('2099-01-02T03:04');
    await form.getByRole('button', { name: 'Create key' }).click();
    secret = await page.getByTestId('new-key-secret').inputValue();
    expect(secret).toMatch(/^sk-sy-/);
    const row = page.getByTestId('keys').getByRole('row', { name: /ci-key/ });
    await row.getByText('$2.00/day').waitFor();
    await row.getByText('active until 2099-01-02 03:04:00 UTC').waitFor();
    const [created] = (await (await gw.admin(`/admin/keys?account_id=${accountId}`)).json() as any).data;
    expect(created).toMatchObject({ rpm_limit: 600, budgets: [{ period: 'day', limit: 2_000_000_000 }], expires_at: '2099-01-02T03:04:00.000Z' });

    // A change: the limits and budgets as the form holds them, the expiry removed.
    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByTestId('edit-key');
    expect(await edit.getByLabel('Budget per day ($)').inputValue()).toBe('2');
    await edit.getByLabel('Requests per minute').fill('900');
    await edit.getByLabel('Budget per week ($)').fill('10');
    await edit.getByLabel('Expires (UTC)').fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await row.getByText('900 / —').waitFor();
    await row.getByText('$2.00/day, $10.00/week').waitFor();
    await row.getByText(/^active$/).waitFor();
  });

  it("shows a request sent with the SDK in the usage table and the spend chart, then revokes the key", async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: secret, maxRetries: 0 });
    const done = await client.chat.completions.create({ model: 'up-openai', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], user: HOSTILE_USER, prompt_cache_key: HOSTILE_SESSION });
    expect(done.choices[0]!.message.content).toBeTruthy();
    const [record] = (await (await gw.admin(`/admin/accounts/${accountId}/usage`)).json() as any).data;
    expect(record.cost).toBeGreaterThan(0);

    await page.reload();
    const usage = page.getByTestId('usage');
    await usage.getByText('up-openai').first().waitFor();
    await usage.getByText(HOSTILE_USER).waitFor();
    await usage.getByText(HOSTILE_SESSION).waitFor();
    const spend = page.getByTestId('spend-panel');
    await spend.getByTestId('spend-chart').locator('canvas').waitFor();
    await spend.getByRole('button', { name: 'by model' }).click();
    await spend.getByTestId('spend-table').getByText('up-openai').waitFor();
    expect(await spend.getByTestId('spend-table').textContent()).toContain(dollarsOf(record.cost));
    await spend.getByRole('button', { name: 'by end user' }).click();
    await spend.getByTestId('spend-table').getByText(HOSTILE_USER).waitFor();
    await spend.getByRole('button', { name: 'by key' }).click();
    await spend.getByTestId('spend-table').getByText(/^ci-key \(key_\w+\)$/).waitFor();

    const row = page.getByTestId('keys').getByRole('row', { name: /ci-key/ });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Confirm revoke' }).click();
    await row.getByText(/^revoked/).waitFor();
    await expect(client.chat.completions.create({ model: 'up-openai', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 401 });
  });

  it("lists the deployments with their health: one cooling down after a 529, the others healthy", async () => {
    health.recordFailure('up-anthropic/0', { status: 529, retryAfterMs: 60_000 }, Date.now());
    await page.getByRole('link', { name: 'Deployments' }).click();
    const table = page.getByTestId('deployments');
    const cooled = table.getByRole('row', { name: /up-anthropic\/0/ });
    await cooled.getByText('cooling down').waitFor();
    expect(await cooled.textContent()).toContain('100%');
    expect(await table.getByRole('row', { name: /up-openai\/0/ }).textContent()).toContain('healthy');
  });

  it('renders hostile values as text: no element made from them, no script run, no dialog', async () => {
    expect(await page.locator('img[src="x"], svg[onload], script:not([src])').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
  });

  it('would refuse an inline script even if one reached the page (the policy is enforced)', async () => {
    await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const script = doc.createElement('script');
      script.textContent = 'window.__pwned = 4';
      doc.body.append(script);
    });
    expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
    await expect.poll(() => dialogs.filter((e) => e.startsWith('csp:')).length).toBe(1);
    dialogs.length = 0;
  });

  it('refuses a write without the CSRF token, and one from another origin', async () => {
    const before = (await (await gw.admin('/admin/accounts')).json() as any).data.length;
    const status = await page.evaluate(async () => {
      const res = await fetch('/console/api/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'forged' }) });
      return { status: res.status, body: await res.json() };
    });
    expect(status).toMatchObject({ status: 403, body: { error: { message: expect.stringContaining('x-csrf-token') } } });
    // The session cookie and the right token, but from another origin (what a forged page would need).
    const session = await page.evaluate(() => fetch('/console/session').then((r) => r.json() as Promise<any>));
    const [cookie] = await operator.cookies();
    const forged = await fetch(`${gw.url}/console/api/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `${cookie!.name}=${cookie!.value}`, 'x-csrf-token': session.csrf_token, origin: 'https://evil.example' },
      body: JSON.stringify({ name: 'forged' }),
    });
    expect(forged.status).toBe(403);
    expect((await (await gw.admin('/admin/accounts')).json() as any).data.length).toBe(before);
  });

  it("shows a key holder their own key's balance, budgets, spend and requests, and nothing of other accounts", async () => {
    const other = await gw.newAccount(3_000_000_000n, 'holder');
    const key = (await (await gw.admin('/admin/keys', 'POST', { account_id: other.accountId, name: 'holder-key', budgets: [{ period: 'week', limit: 1_000_000_000 }] })).json() as any).key as string;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    await client.chat.completions.create({ model: 'up-anthropic', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], user: 'holder-user' });
    const holder = await browser.newContext();
    holder.setDefaultTimeout(20_000);
    const hp = await holder.newPage();
    const holderDialogs: string[] = [];
    watchForScripts(hp, holderDialogs);
    await hp.goto(`${gw.url}/console`);
    await signIn(hp, key);
    await hp.getByTestId('role').getByText(`key holder · ${other.accountId}`).waitFor();
    await hp.getByTestId('balance').getByText(other.accountId).waitFor();
    const week = hp.getByTestId('budgets').getByRole('row', { name: /week/ });
    await week.getByText('$1.00').waitFor();
    const [budget] = (await (await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).json() as any).budgets;
    expect(budget.spent).toBeGreaterThan(0);
    expect(await week.textContent()).toContain(dollarsOf(budget.spent));
    const spend = hp.getByTestId('spend-panel');
    await spend.getByRole('button', { name: 'by model' }).click();
    await spend.getByTestId('spend-table').getByText('up-anthropic').waitFor();
    const text = await hp.locator('body').textContent();
    expect(text).not.toContain('up-openai');
    expect(text).not.toContain(accountId);
    expect(await hp.getByRole('link', { name: 'Accounts' }).count()).toBe(0);
    // Its own requests (GET /v1/usage), filterable by model.
    const listed = (await (await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    expect(listed.data).toHaveLength(1);
    const own = hp.getByTestId('my-usage');
    await own.getByText(listed.data[0].request_id).waitFor();
    expect(await own.getByRole('row').count()).toBe(2);
    const filter = hp.getByTestId('usage-filter');
    await filter.getByLabel('Model').fill('up-openai');
    await filter.getByRole('button', { name: 'Filter' }).click();
    await hp.getByText('No requests.').waitFor();
    await filter.getByLabel('Model').fill('up-anthropic');
    await filter.getByRole('button', { name: 'Filter' }).click();
    await hp.getByTestId('my-usage').getByText(listed.data[0].request_id).waitFor();
    // The operator's API is closed to this session, whatever the page asks.
    const csrf = (await hp.evaluate(() => fetch('/console/session').then((r) => r.json() as Promise<any>))).csrf_token;
    const tried = await hp.evaluate(async (token) => {
      const list = await fetch('/console/api/admin/accounts');
      const write = await fetch('/console/api/admin/accounts', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': token }, body: '{"name":"x"}' });
      return [list.status, write.status];
    }, csrf);
    expect(tried).toEqual([403, 403]);
    expect(holderDialogs).toEqual([]);

    await hp.getByRole('button', { name: 'Sign out' }).click();
    await hp.getByTestId('sign-in').waitFor();
    expect(await hp.evaluate(() => fetch('/console/api/v1/balance').then((r) => r.status))).toBe(401);
    await holder.close();
  });
});

/** As the console shows money: cents at least, up to six decimals below a dollar, no trailing zeros past the cents. */
function dollarsOf(nano: number): string {
  const d = nano / 1e9;
  return `$${d.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: d >= 1 ? 2 : 6 })}`;
}
