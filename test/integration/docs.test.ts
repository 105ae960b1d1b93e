/**
 * Every shell block of README.md and docs/*.md runs as written against a started gateway, so a
 * wrong URL, a missing script or a renamed field fails CI instead of a new user. What a block may
 * assume is what the text around it says: `KEY` a funded key, `ADMIN` the admin key, `ACCOUNT` an
 * account id and `KEY_ID` a key id (fresh for each block, so one that revokes a key revokes its
 * own). `http://127.0.0.1:8080` is replaced by the test gateway's address; nothing else is
 * rewritten. `curl` fails on an HTTP error (the blocks use `-s`, which alone would hide it); `make`
 * runs dry (`make -n`: the target exists and resolves), since it would start or test the very
 * repository under test. A block that starts a gateway (`serve`) passes when that gateway answers
 * on the port it was given.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { captureChildLog } from '../support/log-capture.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const DOCUMENTED_ORIGIN = 'http://127.0.0.1:8080';

interface Block {
  file: string;
  line: number;
  code: string;
}

function shellBlocks(file: string): Block[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i])) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    blocks.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

const PRELUDE = [
  'set -euo pipefail',
  'curl() { command curl --fail-with-body --show-error --max-time 60 "$@"; }',
  'make() { command make --dry-run "$@" >/dev/null; }',
  '',
].join('\n');

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.close());

/** A fresh account and key for one block. */
async function blockEnv(): Promise<Record<string, string>> {
  const account = await gw.newAccount(10_000_000_000n, 'docs');
  const created = (await (await gw.admin('/admin/keys', 'POST', { account_id: account.accountId, name: 'docs' })).json()) as { id: string };
  return { KEY: gw.key, ADMIN: gw.adminKey, ACCOUNT: account.accountId, KEY_ID: created.id };
}

interface Ran {
  code: number | null;
  output: string;
}

function runBash(script: string, env: Record<string, string>, timeoutMs = 90_000): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    captureChildLog(child, 'readme-block', env, 'log-lines');
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Runs a block that starts a gateway; resolves with what it printed once that gateway answers. */
async function runServing(script: string, env: Record<string, string>): Promise<{ answered: boolean; output: string }> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'swy-docs-'));
  const child = spawn('bash', ['-c', script], {
    cwd: ROOT,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port), SWITCHYARD_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  captureChildLog(child, 'readme-serve', env, 'log-lines');
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  let answered = false;
  try {
    for (let i = 0; i < 480 && !exited && !answered; i++) {
      answered = await fetch(`http://127.0.0.1:${port}/v1/models`).then((r) => r.status === 401, () => false);
      if (!answered) await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    if (!exited) process.kill(-child.pid!, 'SIGTERM');
    await new Promise((r) => (exited ? r(undefined) : child.once('exit', r)));
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { answered, output };
}

describe('every shell block in the documentation runs', () => {
  const blocks = DOCS.flatMap(shellBlocks);

  it('finds the blocks, and they use full URLs (curl rejects :8080/…)', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    for (const b of blocks) expect(b.code, `${b.file}:${b.line}`).not.toMatch(/(^|[\s'"]):\d+\//m);
  });

  for (const b of blocks) {
    it(`${b.file}:${b.line}`, async () => {
      const script = PRELUDE + b.code.replaceAll(DOCUMENTED_ORIGIN, gw.url);
      const env = await blockEnv();
      if (/\bserve\b/.test(b.code)) {
        const { answered, output } = await runServing(script, env);
        expect(answered, output).toBe(true);
      } else {
        const { code, output } = await runBash(script, env);
        expect(code, output).toBe(0);
      }
    }, 180_000);
  }
});
