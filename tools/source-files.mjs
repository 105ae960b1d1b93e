// What the repository's own checks (tools/check-*.mjs) read: the source files under a folder, and
// the rule "no line outside these folders may match" that two of them are.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Every file under dir whose name matches `names`, skipping node_modules and dot entries. */
export function* sourceFiles(dir, names = /\.(ts|mts|js|mjs)$/) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path, names);
    else if (names.test(name)) yield path;
  }
}

/**
 * Each line under root matching one of `patterns`, in a file whose path (relative to root, with /)
 * matches none of `allowed`, as `path:line: text`.
 */
export function linesOutside(root, allowed, patterns) {
  const problems = [];
  for (const path of sourceFiles(root)) {
    const rel = relative(root, path).split(sep).join('/');
    if (allowed.some((re) => re.test(rel))) continue;
    readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
      if (patterns.some((re) => re.test(line))) problems.push(`${join(root, rel)}:${i + 1}: ${line.trim()}`);
    });
  }
  return problems;
}
