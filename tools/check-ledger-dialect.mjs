// Fails when code outside the ledger's connection module asks which database it runs on.
// The ledger picks its statements once (src/ledger/connect.ts -> postgres/ or sqlite/, behind
// src/ledger/statements.ts); a dialect check anywhere else is a rule written twice. The import
// side of the same boundary is .dependency-cruiser.cjs's `ledger-dialect-chosen-at-connection`.
// Usage: node tools/check-ledger-dialect.mjs [root (default src)]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

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

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) yield path;
  }
}

const problems = [];
for (const path of files(root)) {
  const rel = relative(root, path).split(sep).join('/');
  if (ALLOWED.some((re) => re.test(rel))) continue;
  readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
    if (CHECKS.some((re) => re.test(line))) problems.push(`${join(root, rel)}:${i + 1}: ${line.trim()}`);
  });
}
if (problems.length > 0) {
  console.error(`dialect checks outside src/ledger/connect.ts (put the difference behind src/ledger/statements.ts):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('ledger dialect: chosen once, at connection');
