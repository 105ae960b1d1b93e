import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What the tests of a repository check script (tools/check-*.mjs) share: a scratch tree of files
 * to run it on, its run (passed or failed, with what it printed), and the tree's removal.
 */
export function checkScript(name: string) {
  const script = join(dirname(fileURLToPath(import.meta.url)), name);
  let root = '';
  return {
    /** Writes `files` (path → text) into a fresh scratch folder; its path. */
    tree(files: Record<string, string>): string {
      root = mkdtempSync(join(tmpdir(), `${name.replace(/\.mjs$/, '')}-`));
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), text);
      }
      return root;
    },
    /** Runs the script on `dir`: its standard output when it passes, its standard error when it fails. */
    check(dir: string): { ok: boolean; output: string } {
      try {
        return { ok: true, output: execFileSync(process.execPath, [script, dir], { encoding: 'utf8', stdio: 'pipe' }) };
      } catch (error) {
        return { ok: false, output: String((error as { stderr: string }).stderr) };
      }
    },
    cleanup(): void {
      if (root) rmSync(root, { recursive: true, force: true });
    },
  };
}
