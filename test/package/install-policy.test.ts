/**
 * What the project's installs bring and run. `make run` installs the dependencies and the build's
 * workspace only (`npm ci --omit=dev`: what the lock does not mark dev); the test, lint, generation and
 * bench tools stay out of it. No install script runs that the project did not choose: each folder
 * with a lock turns scripts off in its .npmrc, and every locked package with an install script is
 * named in that folder's package.json "allowScripts" (false, or true where a make target runs it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const INSTALLS = ['.', 'tools/bench', 'test/agents/clis'];

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  hasInstallScript?: boolean;
}
const readJson = (path: string) => JSON.parse(readFileSync(join(REPO, path), 'utf8'));
const lockOf = (dir: string): Record<string, LockEntry> => readJson(join(dir, 'package-lock.json')).packages;
/** `node_modules/a/node_modules/@b/c` -> `@b/c`. */
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('installs', () => {
  it.each(INSTALLS)('%s: install scripts are off, and each locked one is a recorded decision', (dir) => {
    expect(readFileSync(join(REPO, dir, '.npmrc'), 'utf8')).toMatch(/^ignore-scripts=true$/m);
    const allowed = readJson(join(dir, 'package.json')).allowScripts ?? {};
    const withScripts = Object.entries(lockOf(dir)).filter(([, e]) => e.hasInstallScript).map(([path]) => nameOf(path));
    for (const name of withScripts) expect(allowed, `${dir}: ${name} has an install script`).toHaveProperty([name]);
  });

  it.each(INSTALLS)('%s: each locked package names its tarball, so an install from a warm cache asks the registry nothing', (dir) => {
    // Without "resolved", npm ci fetches every package's metadata first (272 requests for make run's
    // install): a user setting (omit-lockfile-registry-resolved) writes locks that way, so .npmrc overrides it.
    expect(readFileSync(join(REPO, dir, '.npmrc'), 'utf8')).toMatch(/^omit-lockfile-registry-resolved=false$/m);
    const unresolved = Object.entries(readJson(join(dir, 'package-lock.json')).packages as Record<string, { version?: string; resolved?: string; link?: boolean }>)
      .filter(([path, e]) => path.startsWith('node_modules/') && !e.link && !e.resolved)
      .map(([path]) => path);
    expect(unresolved).toEqual([]);
  });

  it('make run installs what running needs, none of the test, lint, generation or bench tools', () => {
    const runtime = Object.entries(lockOf('.'))
      .filter(([path, e]) => path.startsWith('node_modules/') && !e.dev)
      .map(([path]) => nameOf(path));
    for (const needed of ['koa', 'libsql', '@electric-sql/pglite', 'esbuild', 'preact', 'chart.js']) expect(runtime).toContain(needed);
    for (const tool of ['typescript', 'tsx', 'vitest', 'orval', '@typespec/compiler', '@stoplight/spectral-cli', '@redocly/cli', 'dependency-cruiser', '@portkey-ai/gateway', 'autocannon', '@scarf/scarf']) {
      expect(runtime).not.toContain(tool);
    }
    // Platform packages that are not this machine's are listed but not installed.
    const installed = Object.entries(lockOf('.')).filter(([path, e]) => path.startsWith('node_modules/') && !e.dev && !e.optional);
    expect(installed.length).toBeLessThan(455);
  });
});
