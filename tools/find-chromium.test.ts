import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { findChromium } from './find-chromium.js';

const root = mkdtempSync(join(tmpdir(), 'find-chromium-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
function browser(dir: string, name: string): string {
  mkdirSync(join(root, dir), { recursive: true });
  const path = join(root, dir, name);
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
  return path;
}

it('finds chromium, chromium-browser or google-chrome on PATH without CHROMIUM_PATH', () => {
  const chrome = browser('a', 'google-chrome');
  expect(findChromium({ PATH: join(root, 'a') }, [])).toBe(chrome);
  const debian = browser('b', 'chromium');
  expect(findChromium({ PATH: [join(root, 'a'), join(root, 'b')].join(':') }, [])).toBe(debian);
  const ubuntu = browser('c', 'chromium-browser');
  expect(findChromium({ PATH: join(root, 'c') }, [])).toBe(ubuntu);
  // Off PATH, where the packages install it.
  expect(findChromium({ PATH: '' }, [join(root, 'b')])).toBe(debian);
});

it('CHROMIUM_PATH wins, and names nothing when it names no file', () => {
  const chosen = browser('d', 'my-chromium');
  expect(findChromium({ PATH: join(root, 'b'), CHROMIUM_PATH: chosen })).toBe(chosen);
  expect(findChromium({ PATH: join(root, 'b'), CHROMIUM_PATH: join(root, 'missing') })).toBeUndefined();
});
