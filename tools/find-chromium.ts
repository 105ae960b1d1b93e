/**
 * The Chromium the console's browser tests and screenshots drive: CHROMIUM_PATH when set, else the
 * first browser found where Debian, Ubuntu, Fedora, Arch and Google's packages put it (on PATH, then
 * /usr/bin and /snap/bin).
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

export function findChromium(env: NodeJS.ProcessEnv = process.env, otherDirs = ['/usr/bin', '/snap/bin']): string | undefined {
  if (env.CHROMIUM_PATH) return existsSync(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
  for (const dirs of [(env.PATH ?? '').split(delimiter).filter(Boolean), otherDirs]) {
    for (const name of CHROMIUM_NAMES) {
      for (const dir of dirs) {
        const path = join(dir, name);
        if (existsSync(path)) return path;
      }
    }
  }
  return undefined;
}
