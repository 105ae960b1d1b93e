import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { findChromium } from '../../tools/find-chromium.js';
// @ts-expect-error plain JavaScript build script, no declarations
import { buildConsole, CONSOLE_OUT } from '../../tools/build-console.mjs';

/** The Chromium the browser tests drive: CHROMIUM_PATH, else one where distributions install it. */
export function chromiumPath(): string | undefined {
  return findChromium();
}

/** `make test` builds the console first; a test file run alone builds it when it is missing. */
export async function consoleBuilt(): Promise<void> {
  if (!existsSync(join(CONSOLE_OUT as string, 'app.js'))) await (buildConsole as () => Promise<void>)();
}

export async function signIn(page: Page, key: string): Promise<void> {
  const form = page.getByTestId('sign-in');
  await form.getByLabel('Key').fill(key);
  await form.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * Records every dialog (an alert from injected script would be one, dismissed), every uncaught
 * page error and every Content-Security-Policy violation the browser reports: the console's own
 * bundle must run under its policy without one.
 */
export function watchForScripts(page: Page, events: string[]): void {
  page.on('dialog', (d) => {
    events.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => events.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (/Content.Security.Policy/i.test(m.text())) events.push(`csp: ${m.text()}`);
  });
}
