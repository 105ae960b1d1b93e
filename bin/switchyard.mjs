#!/usr/bin/env node
// The `switchyard` command. In the npm package (no src/) it runs the compiled JavaScript in dist/,
// which `npm pack` builds, so an install needs neither tsx nor TypeScript. In a clone it runs the
// TypeScript in src/ through tsx, as `make run` does, so it never runs a stale build.
import { existsSync } from 'node:fs';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(`switchyard: Node ${process.versions.node} is not supported; use Node 22 (22.12 or later) or 24 (see .nvmrc; \`make run\` brings one itself)`);
  process.exit(1);
}

const source = new URL('../src/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/src/main.js', import.meta.url).href);
}
