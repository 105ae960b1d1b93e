/**
 * Where the ledger lives, as the environment says, and the lock that keeps an embedded (PGlite)
 * data directory to one process. Apart from connect.ts so the CLI can refuse a directory in use
 * before it loads the database modules (a second or more on a loaded machine).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import lockfile from 'proper-lockfile';

/** The local state directory: the embedded database's files when no DATABASE_URL, and `serve --demo`'s key. */
export function dataDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.SWITCHYARD_DATA_DIR || './data';
}

/** The embedded databases: SQLite (a file in the data directory) or PGlite (PostgreSQL in WebAssembly). */
export type EmbeddedDatabase = 'sqlite' | 'pglite';
export const EMBEDDED_DATABASES: readonly EmbeddedDatabase[] = ['sqlite', 'pglite'];
/** What a new data directory gets (DECISIONS.md, "Embedded database"). */
export const DEFAULT_EMBEDDED: EmbeddedDatabase = 'sqlite';
/** SQLite's file in the data directory. */
export const SQLITE_FILE = 'ledger.sqlite';

/**
 * Which embedded database serves `dataDir`: SWITCHYARD_EMBEDDED_DB when set; otherwise the one
 * whose files are already there (a directory PGlite wrote stays PGlite's, so an upgrade never
 * starts from an empty ledger beside the old one); otherwise the default.
 */
export function embeddedFromEnv(dataDir: string, env: NodeJS.ProcessEnv = process.env): EmbeddedDatabase {
  const chosen = env.SWITCHYARD_EMBEDDED_DB;
  if (chosen) {
    if (!(EMBEDDED_DATABASES as readonly string[]).includes(chosen)) {
      throw new Error(`SWITCHYARD_EMBEDDED_DB must be one of ${EMBEDDED_DATABASES.join(', ')} (got "${chosen}")`);
    }
    return chosen as EmbeddedDatabase;
  }
  if (existsSync(join(dataDir, SQLITE_FILE))) return 'sqlite';
  if (existsSync(join(dataDir, 'PG_VERSION'))) return 'pglite';
  return DEFAULT_EMBEDDED;
}

/**
 * The directory an embedded database of this process would lock: the data directory without
 * DATABASE_URL, a `sqlite:` URL's directory; undefined for PostgreSQL.
 */
export function embeddedDirFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = env.DATABASE_URL;
  if (!url) return dataDirFromEnv(env);
  const sqlite = /^(?:sqlite|file):(?:\/\/)?(.+)$/.exec(url)?.[1];
  return sqlite && sqlite !== ':memory:' ? dirname(sqlite) : undefined;
}

/**
 * A crashed holder's lock is taken over once it has not been refreshed for this long. The holder
 * refreshes it every half of this, from its event loop: PGlite's start blocks that loop for seconds
 * on a loaded machine, and at 10 s a starting gateway lost its own lock to the CLI.
 */
const LOCK_STALE_MS = 30_000;
const LOCK_NAME = 'switchyard.lock';
/** The holder's process id, beside the lock directory (which must stay empty to be removed). */
const PID_NAME = 'switchyard.lock.pid';

/**
 * PGlite is PostgreSQL in this process: a second process on the same data directory (another
 * gateway, or the CLI while the gateway runs) would start from the files as they are and each would
 * lose the other's writes. An exclusive lock on the directory (proper-lockfile: a lock directory
 * whose age is refreshed while held, so a crashed holder's lock goes stale) makes the second one
 * fail, with a message saying what to do. Released when the ledger closes.
 *
 * The holder writes its process id beside the lock. While that process lives the answer is
 * immediate; only a holder that is gone (crashed a moment ago, its lock not yet stale) is waited
 * out, up to the stale age. Without the id every refusal waited out those retries, ~11 s. Releasing
 * removes both.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const lockfilePath = join(dataDir, LOCK_NAME);
  const pidPath = join(dataDir, PID_NAME);
  // Its default throws from a timer, which would take the gateway down with it.
  const onCompromised = (err: Error) => process.emitWarning(`the lock on ${dataDir} was lost: ${err.message}`);
  const take = (retries: number) =>
    lockfile.lock(dataDir, { lockfilePath, stale: LOCK_STALE_MS, retries: { retries, factor: 1.5, minTimeout: 500, maxTimeout: 4_000 }, onCompromised });
  let release: () => Promise<void>;
  try {
    release = await take(0).catch(async (e: unknown) => {
      if ((e as { code?: string }).code !== 'ELOCKED' || (await holderIsAlive(pidPath))) throw e;
      return take(12); // about 35 s: longer than the stale age
    });
  } catch (e) {
    if ((e as { code?: string }).code !== 'ELOCKED') throw e;
    throw inUse(dataDir);
  }
  await writeFile(pidPath, String(process.pid));
  // A clean exit leaves the directory as it found it: no lock, no process id.
  return async () => {
    await rm(pidPath, { force: true });
    await release();
  };
}

/** Whether the process named in the pid file runs (EPERM: it runs as another user). */
async function holderIsAlive(pidPath: string): Promise<boolean> {
  const pid = Number(await readFile(pidPath, 'utf8').catch(() => ''));
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

/**
 * Fails at once when a live process holds the data directory, without taking the lock (the
 * ledger takes it when it opens). A directory that is free, or held by a process that is gone,
 * passes: opening decides those.
 */
export async function refuseDataDirInUse(dataDir: string): Promise<void> {
  const held = await lockfile.check(dataDir, { lockfilePath: join(dataDir, LOCK_NAME), stale: LOCK_STALE_MS }).catch(() => false);
  if (held && (await holderIsAlive(join(dataDir, PID_NAME)))) throw inUse(dataDir);
}

function inUse(dataDir: string): Error {
  return new Error(
    `the embedded database in ${dataDir} is in use by another Switchyard process (a gateway, or this CLI while a gateway runs). ` +
      'An embedded database serves one process: stop the other one, use the admin API of the running gateway, or set DATABASE_URL to share PostgreSQL.',
  );
}
