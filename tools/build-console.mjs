// `make console`: bundles the web console (console/src, Preact and Chart.js) with esbuild into
// console/dist/, which the gateway serves at /console (src/http/console/static-assets.ts).
// tools/build.mjs copies it into dist/ for `make build` and the npm package. Types: `make typecheck`.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
export const CONSOLE_OUT = join(root, 'console/dist');

export async function buildConsole() {
  rmSync(CONSOLE_OUT, { recursive: true, force: true });
  mkdirSync(CONSOLE_OUT, { recursive: true });
  await build({
    entryPoints: [join(root, 'console/src/main.tsx')],
    outfile: join(CONSOLE_OUT, 'app.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'eof',
    logLevel: 'warning',
  });
  for (const file of ['index.html', 'style.css', 'favicon.svg']) copyFileSync(join(root, 'console', file), join(CONSOLE_OUT, file === 'style.css' ? 'app.css' : file));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildConsole();
  console.log(`built the console into ${CONSOLE_OUT}`);
}
