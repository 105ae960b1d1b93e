// Fails when code outside the ledger's connection module asks which database it runs on.
// The ledger picks its statements once (src/ledger/connect.ts -> postgres/ or sqlite/, behind
// src/ledger/statements.ts); a dialect check anywhere else is a rule written twice. The import
// side of the same boundary is .dependency-cruiser.cjs's `ledger-dialect-chosen-at-connection`.
// Usage: node tools/check-ledger-dialect.mjs [root (default src)]
import { linesOutside } from './source-files.mjs';

const root = process.argv[2] ?? 'src';
/** Where the database may be named: the connection module and each implementation's own folder. */
const ALLOWED = [/^ledger\/connect\.ts$/, /^ledger\/(postgres|sqlite)\//];
/** What a dialect check looks like: a helper that asks, or a look at Kysely's adapter or dialect. */
const CHECKS = [
  /\bis(Sqlite|Postgres|Pglite|PGlite)\s*\(/,
  /\b(Sqlite|Postgres)Adapter\b/,
  /\.getExecutor\(\)\s*\.adapter\b/,
  /instanceof\s+(Sqlite|Postgres|PGlite)\w*/,
  /\b(dialect|databaseKind|dbKind)\s*===?\s*['"](sqlite|postgres|pglite)['"]/,
];

const problems = linesOutside(root, ALLOWED, CHECKS);
if (problems.length > 0) {
  console.error(`dialect checks outside src/ledger/connect.ts (put the difference behind src/ledger/statements.ts):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('ledger dialect: chosen once, at connection');
