// `make build` / `npm run build` (and so `npm pack`): compiles src/ and generated/ to dist/, one
// JavaScript file per TypeScript file, and copies the OpenAPI document the server reads at start,
// with a JSON copy beside it (what the server parses: JSON.parse is ~100x faster than YAML's).
// esbuild only strips types (seconds, where tsc's emit took over a minute on a loaded machine);
// the types are checked by `make lint` (tsc --noEmit). Plain JavaScript: it runs without tsx.
// The web console is bundled too (tools/build-console.mjs) and copied to dist/console/dist.
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { parse } from 'yaml';
import { buildConsole, CONSOLE_OUT } from './build-console.mjs';

const root = new URL('..', import.meta.url).pathname;
const compiled = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !/\.test(-helper)?\.ts$/.test(file);
const sources = ['src', 'generated'].flatMap((dir) =>
  readdirSync(join(root, dir), { recursive: true }).filter(compiled).map((file) => join(root, dir, file)),
);

rmSync(join(root, 'dist'), { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: join(root, 'dist'),
  outbase: root,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // No source maps: the output is the sources without their types, line for line readable, and the
  // package ships what users run (maps doubled its file count).
  sourcemap: false,
  logLevel: 'warning',
});
cpSync(join(root, 'generated/openapi.yaml'), join(root, 'dist/generated/openapi.yaml'));
writeFileSync(join(root, 'dist/generated/openapi.json'), JSON.stringify(parse(readFileSync(join(root, 'generated/openapi.yaml'), 'utf8'))));
await buildConsole();
cpSync(CONSOLE_OUT, join(root, 'dist/console/dist'), { recursive: true });
console.log(`built ${sources.length} files into dist/`);
