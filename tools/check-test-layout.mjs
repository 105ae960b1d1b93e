// Fails when a test is not where CONTRIBUTING.md ("Tests") says it lives:
// - a unit test is a `*.test.ts` beside the file it tests (src/, tools/, console/src/) and runs in
//   the test's own process: it never starts the gateway or a fake upstream;
// - a suite under test/ runs something real beyond one module: the gateway, a fake upstream, a
//   database, a child process, a socket or Chromium (test/package/ checks the package's own files);
//   a test under test/ that reaches none of them is a unit test in the wrong place;
// - test helpers live in test/support/ (or beside the suites that share them), never in src/: a
//   file of src/ that is not a test never imports vitest, test/ or tools/.
// Imports are followed through test/ and tools/ (the helpers), not through src/.
// Usage: node tools/check-test-layout.mjs [repository root (default: this one)]
import { existsSync, readFileSync, statSync } from 'node:fs';
import { sourceFiles } from './source-files.mjs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const repo = resolve(process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), '..'));
const rel = (path) => relative(repo, path).split(sep).join('/');

/** What running the gateway looks like from a test (directly or through a helper). */
const GATEWAY = [/^test\/support\/(gateway|gateway-process|sdk-gateway)\.ts$/, /^src\/app\//, /^src\/main\.ts$/, /^tools\/fake-upstream\/(index|server|main)\.ts$/];
/** Something real beyond one module: the gateway, a database, a process, a socket, a browser. */
const REAL = [
  ...GATEWAY,
  // a database: the ledger opened, its connection, or a driver
  /^test\/ledger\/db-targets\.ts$/, /^src\/ledger\/(index|connect)\.ts$/, /^src\/ledger\/sqlite\/database\.ts$/, /^(pg|@electric-sql\/pglite|@libsql\/client)$/,
  /^node:(child_process|http|https|net)$/,
  /^playwright-core$/,
];
/** Folders of test/ whose subject is a file rather than a running thing. */
const OWN_SUBJECT = [/^test\/package\//];

const files = (dir) => sourceFiles(dir, /\.(ts|tsx|mts|mjs)$/);

/** A file's imports: repo-relative paths for relative specifiers, the bare specifier otherwise. */
const importsCache = new Map();
function importsOf(path) {
  if (importsCache.has(path)) return importsCache.get(path);
  const text = readFileSync(path, 'utf8');
  const found = [];
  for (const m of text.matchAll(/(?:^|[^\w.])(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
    const spec = m[1];
    if (!spec.startsWith('.')) { found.push(spec); continue; }
    const base = resolve(dirname(path), spec);
    const candidate = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base, `${base}.ts`, join(base, 'index.ts')].find((p) => existsSync(p) && statSync(p).isFile());
    found.push(rel(candidate ?? base));
  }
  importsCache.set(path, found);
  return found;
}

/** Everything a file reaches, following relative imports through test/ and tools/ only. */
function reach(path) {
  const seen = new Set();
  const queue = [rel(path)];
  while (queue.length > 0) {
    const next = queue.pop();
    for (const target of importsOf(join(repo, next))) {
      if (seen.has(target)) continue;
      seen.add(target);
      if (/^(test|tools)\/.*\.(ts|tsx|mts|mjs)$/.test(target) && existsSync(join(repo, target))) queue.push(target);
    }
  }
  return [...seen];
}

const matches = (list, target) => list.some((re) => re.test(target));
const problems = [];

for (const path of [...files(join(repo, 'src')), ...files(join(repo, 'tools')), ...files(join(repo, 'console/src'))]) {
  const name = rel(path);
  if (name.startsWith('tools/build/') || name.startsWith('tools/bench/')) continue;
  if (/\.test\.tsx?$/.test(name)) {
    const starts = reach(path).filter((t) => matches(GATEWAY, t));
    if (starts.length > 0) problems.push(`${name}: a unit test that starts the gateway or a fake upstream (${starts[0]}): move it to test/`);
  } else if (name.startsWith('src/')) {
    if (/\.test[-.]/.test(name)) problems.push(`${name}: a test helper in src/: move it to test/support/`);
    const bad = importsOf(path).find((t) => t === 'vitest' || /^(test|tools)\//.test(t));
    if (bad) problems.push(`${name}: imports ${bad}; code of src/ that is not a test never imports tests, their helpers or tools`);
  }
}

for (const path of files(join(repo, 'test'))) {
  const name = rel(path);
  if (!/\.test\.tsx?$/.test(name) || matches(OWN_SUBJECT, name)) continue;
  if (!reach(path).some((t) => matches(REAL, t))) {
    problems.push(`${name}: runs no gateway, fake upstream, database, process, socket or browser: a unit test, which lives beside its source as *.test.ts`);
  }
}

if (problems.length > 0) {
  console.error(`tests out of place (CONTRIBUTING.md, "Tests"):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('test layout: unit tests beside their source, suites that run the gateway under test/');
