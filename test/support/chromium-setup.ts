/**
 * vitest global setup: says once, at the start of the run, when the browser suites (test/console:
 * the console and its sign-in through an identity provider; test/integration/desktop-app-sign-in:
 * a desktop app's sign-in) are skipped for want of a Chromium. A test file's own output is shown only when it fails (vitest.config.ts), so the notice
 * is given here.
 */
import { findChromium } from '../../tools/find-chromium.js';

export default function setup(): void {
  if (findChromium()) return;
  console.warn(
    '\nBrowser tests (the console, a desktop app\'s sign-in) SKIPPED: no Chromium found (CHROMIUM_PATH, or chromium, chromium-browser or google-chrome on PATH, /usr/bin or /snap/bin); install one or set CHROMIUM_PATH.\n',
  );
}
