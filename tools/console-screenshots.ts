/**
 * `make screenshots`: the console's main pages as README shows them (docs/console/*.png). Starts
 * the gateway on a fresh PGlite with the fake upstream, makes a few accounts, keys and requests
 * through the OpenAI SDK, and photographs the pages in the system's Chromium (CHROMIUM_PATH, else
 * one found where distributions install it: find-chromium.ts), as the browser tests drive it.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { chromium, type Page } from 'playwright-core';
import { findChromium } from './find-chromium.js';
import { startFakeUpstream } from './fake-upstream/index.js';
import { fakeCatalog } from '../test/support/fake-catalog.js';
import { startTestGateway } from '../test/support/gateway.js';
import { consoleBuilt, signIn } from '../test/console/console-support.js';

const OUT = fileURLToPath(new URL('../docs/console/', import.meta.url));
const executablePath = findChromium();
if (!executablePath) {
  console.error('no Chromium found (chromium, chromium-browser or google-chrome on PATH): install one or set CHROMIUM_PATH');
  process.exit(1);
}

await consoleBuilt();
const fake = await startFakeUpstream();
const gw = await startTestGateway({ catalog: fakeCatalog(fake) });
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const post = async (path: string, body: unknown) => (await gw.admin(path, 'POST', body)).json() as Promise<any>;
  const acme = await post('/admin/accounts', { name: 'Acme Research', balance: 50_000_000_000 });
  await post('/admin/accounts', { name: 'Beta Labs', balance: 12_000_000_000 });
  const alice = await post('/admin/keys', { account_id: acme.id, name: 'alice-laptop', budgets: [{ period: 'day', limit: 5_000_000_000 }, { period: 'month', limit: 50_000_000_000 }] });
  const ci = await post('/admin/keys', { account_id: acme.id, name: 'ci-bot', rpm_limit: 60, allowed_models: ['up-openai'], expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() });
  const calls: Array<[string, string, string, string, number]> = [
    [alice.key, 'up-anthropic', 'alice', 'refactor-auth', 3],
    [alice.key, 'up-openai', 'alice', 'docs-pass', 2],
    [ci.key, 'up-openai', 'ci', 'nightly-1234', 4],
    [ci.key, 'up-openai', 'ci', 'nightly-1235', 2],
  ];
  for (const [key, model, user, session, n] of calls) {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    for (let i = 0; i < n; i++) {
      fake.setScenario({ words: 40 + 60 * i });
      await client.chat.completions.create({ model, max_tokens: 400, messages: [{ role: 'user', content: 'Summarise the design doc. '.repeat(20 * (i + 1)) }], user, prompt_cache_key: session });
    }
  }
  mkdirSync(OUT, { recursive: true });
  const shoot = async (page: Page, name: string) => {
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: `${OUT}${name}.png`, fullPage: true });
    console.log(`docs/console/${name}.png`);
  };
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${gw.url}/console`);
  await shoot(page, 'sign-in');
  await signIn(page, gw.adminKey);
  await page.getByTestId('role').waitFor();
  await page.getByTestId('spend-panel').getByRole('button', { name: 'by model' }).click();
  await page.getByTestId('spend-table').waitFor();
  await shoot(page, 'operator-dashboard');
  await page.goto(`${gw.url}/console#/keys`);
  await page.getByTestId('keys').getByText('alice-laptop').waitFor();
  // The form open: limits, models, budgets and expiry.
  await page.getByText('New key').click();
  await shoot(page, 'keys');
  await page.goto(`${gw.url}/console#/accounts/${acme.id}`);
  await page.getByTestId('usage').waitFor();
  await page.getByTestId('spend-panel').getByRole('button', { name: 'by session' }).click();
  await page.getByTestId('spend-table').getByText('refactor-auth').waitFor();
  await shoot(page, 'account');

  const holder = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const hp = await holder.newPage();
  await hp.goto(`${gw.url}/console`);
  await signIn(hp, alice.key);
  await hp.getByTestId('balance').waitFor();
  await hp.getByTestId('spend-panel').getByRole('button', { name: 'by model' }).click();
  await hp.getByTestId('spend-table').waitFor();
  await shoot(hp, 'key-holder');
} finally {
  await browser.close();
  await gw.close();
  await fake.close();
}
