import { appendFile, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { SettleRequest } from './types.js';

/**
 * Settles the database did not take before the process stopped, kept in a file (one JSON line
 * each) where the next start finds and applies them. A file rather than a table: they are
 * there precisely because the database could not be written. Settles are idempotent by request
 * id, so a line applied twice (a crash between applying and removing the file) changes nothing.
 */

/** bigints (costs) travel as strings tagged so they come back as bigints. */
const encode = (s: SettleRequest) => JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v));
const decode = (line: string) =>
  JSON.parse(line, (_k, v) => (v && typeof v === 'object' && typeof v.$bigint === 'string' ? BigInt(v.$bigint) : v)) as SettleRequest;

export async function spoolSettles(path: string, settles: SettleRequest[]): Promise<void> {
  if (settles.length === 0) return;
  await appendFile(path, settles.map((s) => `${encode(s)}\n`).join(''), { mode: 0o600 });
}

/**
 * Takes the spooled settles for applying: the file is renamed first (an atomic claim, so two
 * instances starting on one directory never apply the same file at once), then read. Files
 * claimed by a start that crashed before finishing are taken again. Returns the settles and how
 * to drop the claimed files once they are applied.
 */
export async function claimSpool(path: string): Promise<{ settles: SettleRequest[]; done: () => Promise<void> }> {
  const dir = dirname(path);
  const name = basename(path);
  const claimed: string[] = [];
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return { settles: [], done: async () => undefined };
  }
  for (const entry of entries) {
    if (entry !== name && !entry.startsWith(`${name}.applying-`)) continue;
    const target = join(dir, `${name}.applying-${process.pid}-${Date.now()}-${claimed.length}`);
    try {
      await rename(join(dir, entry), target);
      claimed.push(target);
    } catch {
      // Another instance claimed it first.
    }
  }
  const settles: SettleRequest[] = [];
  for (const file of claimed) {
    for (const line of (await readFile(file, 'utf8')).split('\n')) if (line.trim()) settles.push(decode(line));
  }
  return { settles, done: async () => void (await Promise.all(claimed.map((f) => rm(f, { force: true })))) };
}
