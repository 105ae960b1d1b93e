import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { memoryMb, startNode, type Child } from './processes.js';
import type { EmbeddedDatabase } from '../../src/ledger/data-dir.js';

const DESCRIPTION: Record<EmbeddedDatabase, string> = {
  sqlite: 'SQLite (libSQL) in a data directory, compiled (make run)',
  pglite: 'PGlite in a data directory, compiled (make run)',
};

/** How the default path starts: ready times from spawn to the listening line, and memory at rest. */
export interface EmbeddedStart {
  /** The embedded database (SWITCHYARD_EMBEDDED_DB). */
  kind: EmbeddedDatabase;
  database: string;
  /** The first start on an empty data directory (it creates the database). */
  firstReadyMs: number;
  /** A start on the directory the first one left. */
  restartReadyMs: number;
  /** VmRSS once the restarted gateway has been idle for IDLE_MS. */
  idleRssMb: number;
}

const IDLE_MS = 2_000;
const READY = /"url":"(http:\/\/[^"]+)"[^\n]*switchyard is listening/;

/**
 * The gateway as `make run` starts it: `node dist/src/main.js serve --demo` (built by `make bench`), the ledger in
 * the embedded database `kind` in a data directory (a fresh temporary one here), the bench's
 * catalog. Started twice, so both the first start and a later one are timed; the second keeps
 * running for the measurements.
 */
export async function startEmbedded(root: string, env: NodeJS.ProcessEnv, kind: EmbeddedDatabase): Promise<{ child: Child; url: string; start: EmbeddedStart; cleanup(): void }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-embedded-'));
  const args = [resolve(root, 'dist/src/main.js'), 'serve', '--demo'];
  const run = async () => {
    const t0 = performance.now();
    const { child, match } = await startNode('switchyard-embedded', args, { ...env, DATABASE_URL: '', SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_EMBEDDED_DB: kind }, READY);
    return { child, url: match[1], readyMs: performance.now() - t0 };
  };
  const first = await run();
  await first.child.stop();
  const second = await run();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  return {
    child: second.child,
    url: second.url,
    start: {
      kind,
      database: DESCRIPTION[kind],
      firstReadyMs: first.readyMs,
      restartReadyMs: second.readyMs,
      idleRssMb: memoryMb(second.child.pid),
    },
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
