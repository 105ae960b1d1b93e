import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where `make console` (tools/build-console.mjs) writes the console's bundle: console/dist beside
 * src/ in a clone, dist/console/dist beside dist/src/ in a build and the npm package.
 */
export const CONSOLE_ASSETS_DIR = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export interface Asset {
  body: Buffer;
  contentType: string;
}

/**
 * The bundle's files, read once at start: only these names are ever served, so no request path
 * reaches the file system. Empty when the console was not built (the console then says so).
 */
export function loadConsoleAssets(dir = CONSOLE_ASSETS_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type) assets.set(name, { body: readFileSync(join(dir, name)), contentType: type });
  }
  return assets;
}
