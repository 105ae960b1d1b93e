/**
 * `switchyard serve --demo` (what `make run` starts) as a newcomer reads it: the banner comes whole
 * before the first JSON log line, says what this mode has (no admin key: no operator sign-in), and
 * its four requests, README's, run as printed with curl and answer.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it, vi } from 'vitest';
import { demoBanner } from '../../src/app/demo-banner.js';
import { captureChildLog } from '../support/log-capture.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'switchyard-banner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The banner's commands: each starts at `curl` and goes on while a line ends with a backslash. */
function curlCommands(banner: string): string[] {
  const commands: string[] = [];
  const lines = banner.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.trimStart().startsWith('curl ')) continue;
    let command = lines[i]!;
    while (command.endsWith('\\')) command = `${command.slice(0, -1)} ${lines[++i]!.trim()}`;
    commands.push(command.trim());
  }
  return commands;
}

it('prints the banner before the log, right for a demo without an admin key, with README\'s four requests working as printed', async () => {
  const env = { ...process.env, DATABASE_URL: '', SWITCHYARD_DATA_DIR: dir, SWITCHYARD_CONFIG: '', SWITCHYARD_ADMIN_KEY: '', PORT: '0', LOG_LEVEL: 'info' };
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--demo'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  captureChildLog(child, 'serve-demo');
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  try {
    await vi.waitFor(() => expect(out).toMatch(/switchyard is listening/), { timeout: 120_000, interval: 100 });
    const firstJson = out.search(/^\{/m);
    const banner = out.slice(0, firstJson);
    expect(banner.trimStart()).toMatch(/^Switchyard is ready\./);
    expect(banner).toMatch(/The log follows/);
    expect(out.slice(firstJson)).toMatch(/"msg":"ledger migrated"/);
    expect(banner).not.toMatch(/operator/);
    expect(banner).toMatch(/Web console: +http:\S+\/console \(sign in with this key\)\n/);
    expect(banner).toMatch(/Admin API: +off \(set SWITCHYARD_ADMIN_KEY/);

    const commands = curlCommands(banner);
    expect(commands.map((c) => /\/v1\/\w+(\/\w+)?/.exec(c)![0])).toEqual(['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/balance']);
    const answers = [];
    for (const command of commands) answers.push((await run('bash', ['-c', `${command} --fail-with-body`], { timeout: 60_000 })).stdout);
    const [stream, messages, responses, balance] = answers as [string, string, string, string];
    expect(stream).toMatch(/^data: \[DONE\]$/m);
    expect(JSON.parse(messages).content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'text']);
    expect(JSON.parse(responses)).toMatchObject({ object: 'response', status: 'completed' });
    expect(JSON.parse(balance)).toHaveProperty('available');
  } finally {
    child.kill('SIGTERM');
  }
}, 240_000);

it('names the operator sign-in when the admin API is on', () => {
  const banner = demoBanner({ url: 'http://h:1', key: 'sk-sy-k', accountId: 'acct_1', balance: 10_000_000_000n, adminKey: true, model: 'm', smallModel: 's' });
  expect(banner).toMatch(/\/console \(sign in with this key; as the operator, with SWITCHYARD_ADMIN_KEY\)/);
  expect(banner).toMatch(/Admin API: +on/);
  expect(banner).toMatch(/balance \$10\.00 = 10000000000 nanodollars/);
});
