/**
 * tools/ensure-node.sh where the system's Node is too old: a Node already unpacked in the user's
 * cache is linked into the clone (no fetch, no unpacking), and a clone that has it keeps it.
 * A fake `node` (the old system one), a fake cached Node and an `npm` that fails if called stand in.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const want = readFileSync(join(REPO, '.nvmrc'), 'utf8').trim();
const dir = mkdtempSync(join(tmpdir(), 'switchyard-toolchain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function script(path: string, body: string) {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

describe('the toolchain (tools/ensure-node.sh)', () => {
  const clone = join(dir, 'clone');
  const cache = join(dir, 'cache');
  const system = join(dir, 'system-bin');
  const os = execFileSync('uname', ['-s']).toString().trim().toLowerCase();
  const arch = ({ x86_64: 'x64', amd64: 'x64', aarch64: 'arm64', arm64: 'arm64' } as Record<string, string>)[execFileSync('uname', ['-m']).toString().trim()];
  const cached = join(cache, 'switchyard', `node-v${want}-${os}-${arch}`);
  mkdirSync(join(clone, 'tools'), { recursive: true });
  cpSync(join(REPO, 'tools/ensure-node.sh'), join(clone, 'tools/ensure-node.sh'));
  cpSync(join(REPO, '.nvmrc'), join(clone, '.nvmrc'));
  mkdirSync(system);
  script(join(system, 'node'), 'echo v20.20.2');
  script(join(system, 'npm'), 'echo "npm must not be called" >&2; exit 1');
  mkdirSync(join(cached, 'bin'), { recursive: true });
  script(join(cached, 'bin', 'node'), `echo v${want}`);
  const ensure = () =>
    execFileSync('bash', [join(clone, 'tools/ensure-node.sh')], {
      env: { PATH: `${system}:/usr/bin:/bin`, HOME: join(dir, 'home'), XDG_CACHE_HOME: cache },
    }).toString().trim();

  it('links the Node unpacked in the user cache into a fresh clone, fetching nothing', () => {
    expect(ensure()).toBe(join(clone, '.toolchain/node/bin'));
    expect(lstatSync(join(clone, '.toolchain/node')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(clone, '.toolchain/node'))).toBe(cached);
  });

  it('keeps the clone\'s link on the next call', () => {
    expect(ensure()).toBe(join(clone, '.toolchain/node/bin'));
    expect(readlinkSync(join(clone, '.toolchain/node'))).toBe(cached);
  });
});
