/**
 * The admin CLI as an operator runs it: `node --import tsx src/main.ts <command>` in its own
 * process, on PostgreSQL in a fresh schema (DATABASE_URL + SWITCHYARD_DB_SCHEMA) when configured,
 * else on PGlite in a temporary SWITCHYARD_DATA_DIR. Each start costs seconds, so the commands
 * run as one scenario.
 */
import { execFile, spawn, type ExecFileOptions } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { pgTarget, type OpenedTarget } from '../ledger/db-targets.js';
import { captureChildLog } from '../support/log-capture.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const execFileAsync = promisify(execFile);
/** A CLI run; a copy of its log (stderr, and any log line on stdout) goes to the run's credential scan. */
function run(file: string, args: string[], opts: ExecFileOptions = {}) {
  const running = execFileAsync(file, args, { ...opts, encoding: 'utf8' });
  captureChildLog(running.child, 'cli');
  return running;
}

describe('switchyard admin CLI', () => {
  let env: Record<string, string>;
  let pg: OpenedTarget | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-cli-'));
    pg = await pgTarget?.open();
    env = pg ? { DATABASE_URL: pg.databaseUrl!, SWITCHYARD_DB_SCHEMA: pg.schema! } : { DATABASE_URL: '', SWITCHYARD_DATA_DIR: dir };
  });
  afterAll(async () => {
    await pg?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function cli(...args: string[]): Promise<any> {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...process.env, ...env } });
    return JSON.parse(stdout);
  }
  async function cliFails(...args: string[]): Promise<string> {
    return failsWith({}, ...args);
  }
  async function failsWith(extraEnv: Record<string, string>, ...args: string[]): Promise<string> {
    const err = (await run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...process.env, ...env, ...extraEnv } }).then(
      () => undefined,
      (e: unknown) => e,
    )) as { code: number; stderr: string } | undefined;
    expect(err?.code).toBe(1);
    return err!.stderr;
  }

  async function together(...jobs: Array<() => Promise<any>>): Promise<any[]> {
    if (pg) return Promise.all(jobs.map((j) => j()));
    const out: any[] = [];
    for (const j of jobs) out.push(await j());
    return out;
  }

  it('serve refuses a setting that is not a whole number in range, naming it, instead of misreading it', async () => {
    for (const [name, value] of [['SWITCHYARD_SEND_TIMEOUT_MS', '60s'], ['SWITCHYARD_SEND_TIMEOUT_MS', '0'], ['SWITCHYARD_HOLD_TTL_MS', '99999999999'], ['PORT', 'http']]) {
      const stderr = await failsWith({ [name]: value }, 'serve');
      expect(stderr).toContain(`${name} must be a whole number from`);
    }
  }, 120_000);

  it('keys carry budgets, a time zone and an expiry, set and cleared; spend prints the admin API\'s summary', async () => {
    const id = (await cli('accounts', 'create', 'budgets', '--balance', '1000')).id as string;
    const created = await cli('keys', 'create', id, '--budget', 'lifetime=5000,day=1000', '--time-zone', 'Europe/Paris', '--expires', '2030-01-01T00:00:00Z');
    expect(created).toMatchObject({ budgets: [{ period: 'day', limit: 1000 }, { period: 'lifetime', limit: 5000 }], budget_time_zone: 'Europe/Paris', expires_at: '2030-01-01T00:00:00.000Z' });
    const [cleared, badBudget, badExpiry, badZone, spend, badGroup] = await together(
      () => cli('keys', 'update', created.id, '--budget', 'none', '--expires', 'never'),
      () => cliFails('keys', 'update', created.id, '--budget', 'fortnight=5'),
      () => cliFails('keys', 'update', created.id, '--expires', 'soon'),
      () => cliFails('keys', 'update', created.id, '--time-zone', 'Mars/Olympus_Mons'),
      () => cli('spend', '--account', id, '--group-by', 'model', '--from', '2026-01-01T00:00:00Z', '--to', '2026-02-01T00:00:00Z'),
      () => cliFails('spend', '--group-by', 'planet'),
    );
    expect(cleared).toMatchObject({ budgets: [], expires_at: null, budget_time_zone: 'Europe/Paris' });
    expect(badBudget).toContain('--budget takes period=nanodollars pairs');
    expect(badExpiry).toContain('--expires must be an RFC 3339 time');
    expect(badZone).toContain('unknown time zone "Mars/Olympus_Mons"');
    expect(spend).toEqual({ object: 'list', group_by: 'model', from: '2026-01-01T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z', data: [] });
    expect(badGroup).toContain('group_by must be one of day, model, key, user, session');
  }, 120_000);

  it('accounts create|show, keys create|list|revoke, credit and balance, in the admin API\'s shapes', async () => {
    const account = await cli('accounts', 'create', 'acme', '--balance', '5000');
    expect(account).toMatchObject({ name: 'acme', balance: 5000, held: 0, available: 5000, unit: 'nanodollars' });
    const id = account.id as string;

    // Independent commands run at once on PostgreSQL; PGlite's data directory takes one process at a time.
    const [created, credited, zeroCredit, missing, notANumber, tooLarge, badLimit, badModel] = await together(
      () => cli('keys', 'create', id, '--name', 'ci', '--rpm', '60'),
      () => cli('credit', id, '2500', '--reason', 'invoice 7'),
      () => cliFails('credit', id, '0', '--reason', 'nothing'),
      () => cliFails('balance', 'acct_missing'),
      () => cliFails('credit', id, 'abc', '--reason', 'typo'),
      // Above 2^53 - 1, the API could not answer the balance as a JSON number.
      () => cliFails('credit', id, '9007199254740993', '--reason', 'too much'),
      () => cliFails('keys', 'create', id, '--tpm', '0'),
      () => cliFails('keys', 'create', id, '--models', 'local-haiku,gpt-nope'),
    );
    expect(badModel).toContain('--models: model "gpt-nope" is not in the catalog (checked against the built-in local catalog (SWITCHYARD_CONFIG is not set))');
    expect(badLimit).toContain('--tpm must be a whole number from 1');
    expect(notANumber).toContain('<amount> must be a whole number of nanodollars');
    expect(tooLarge).toContain('must be at most 9007199254740991');
    expect(created.key).toMatch(/^sk-sy-/);
    expect(created).toMatchObject({ account_id: id, name: 'ci', revoked_at: null, rpm_limit: 60, tpm_limit: null, allowed_models: null });
    const limited = await cli('keys', 'update', created.id, '--rpm', 'none', '--tpm', '100000', '--models', 'local-haiku,local-haiku');
    expect(limited).toMatchObject({ rpm_limit: null, tpm_limit: 100000, allowed_models: ['local-haiku'] });
    expect(credited.entry).toMatchObject({ kind: 'credit', amount: 2500, balance_after: 7500, reason: 'invoice 7' });
    expect(credited.account).toMatchObject({ id, balance: 7500 });
    expect(zeroCredit).toContain('must not be zero');
    expect(missing).toContain('no account acct_missing');

    const [balance, shown, revoked, listedAccounts, journal, firstPage, badPage] = await together(
      () => cli('balance', id),
      () => cli('accounts', 'show', id),
      () => cli('keys', 'revoke', created.id),
      () => cli('accounts', 'list'),
      () => cli('ledger', id),
      () => cli('ledger', id, '--limit', '1'),
      () => cliFails('ledger', id, '--before', 'abc'),
    );
    expect(listedAccounts.data.map((a: any) => a.id)).toContain(id);
    expect(balance).toEqual({ account_id: id, balance: 7500, held: 0, available: 7500, unit: 'nanodollars' });
    expect(shown).toMatchObject({ id, balance: 7500 });
    expect(revoked.revoked_at).not.toBeNull();
    expect(journal.data.map((e: any) => [e.amount, e.reason])).toEqual([[2500, 'invoice 7'], [5000, 'initial balance']]);
    expect(firstPage).toMatchObject({ has_more: true, data: [{ id: credited.entry.id }], last_id: credited.entry.id });
    const olderPage = await cli('ledger', id, '--before', String(firstPage.last_id));
    expect(olderPage).toMatchObject({ has_more: false, data: [{ reason: 'initial balance' }] });
    expect(badPage).toContain('--before must be a journal entry id');
    const listed = await cli('keys', 'list', '--account', id);
    expect(listed).toEqual({ data: [expect.objectContaining({ id: created.id, revoked_at: revoked.revoked_at })] });

    // What the CLI wrote is the ledger the gateway reads: journaled, exact, and the key is dead.
    const ledger = pg?.ledger ?? (await openLedger({ dataDir: dir }));
    try {
      expect(await ledger.authenticate(created.key)).toBeUndefined();
      expect((await ledger.ledgerEntries(id)).map((e) => [e.amount, e.reason])).toEqual([[2500n, 'invoice 7'], [5000n, 'initial balance']]);
      expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
    } finally {
      if (!pg) await ledger.close();
    }
  }, 300_000);

  it('--models reads the catalog SWITCHYARD_CONFIG names, without its providers\' keys, and says so', async () => {
    const config = join(dir, 'catalog.yaml');
    writeFileSync(config, ['providers:', '  up: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: SWITCHYARD_TEST_UNSET_KEY }', 'models:',
      '  - { id: house-model, provider: up, upstream_model: m, free: true, aliases: [house] }', ''].join('\n'));
    const account = await cli('accounts', 'create', 'catalogs');
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', MAIN, 'keys', 'create', account.id, '--models', 'house'], {
      env: { ...process.env, ...env, SWITCHYARD_CONFIG: config },
    });
    expect(JSON.parse(stdout).allowed_models).toEqual(['house-model']);
    expect(stderr).toContain(`--models checked against the catalog in ${config} (SWITCHYARD_CONFIG)`);
    // The built-in catalog is not the one the gateway would load here.
    const refused = await failsWith({ SWITCHYARD_CONFIG: config }, 'keys', 'create', account.id, '--models', 'local-haiku');
    expect(refused).toContain(`model "local-haiku" is not in the catalog (checked against the catalog in ${config} (SWITCHYARD_CONFIG))`);
  }, 120_000);
});

/**
 * `switchyard serve` as an operator starts it, on PGlite in its own data directory: the demo key
 * survives a restart, the CLI is refused at once while the gateway holds the directory, a busy
 * port is one line, and what the gateway billed is what `usage` and `ledger` list.
 */
describe('switchyard serve beside the CLI', () => {
  let dir: string;
  const env = () => ({ ...process.env, DATABASE_URL: '', SWITCHYARD_DATA_DIR: dir, SWITCHYARD_CONFIG: '', PORT: '0', LOG_LEVEL: 'warn' });
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-serve-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts `serve --demo` and reads the URL and key it prints. */
  async function serveDemo(): Promise<{ url: string; key: string; accountId: string; stop: () => Promise<void> }> {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--demo'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    captureChildLog(child, 'serve-demo');
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await Promise.race([
      vi.waitFor(() => expect(out).toMatch(/Try it:/), { timeout: 120_000, interval: 100 }),
      exited.then(() => Promise.reject(new Error(`serve exited: ${out}`))),
    ]);
    return {
      url: /OpenAI-compatible base URL: +(http:\/\/\S+)\/v1/.exec(out)![1],
      key: /^ +(sk-sy-\S+)$/m.exec(out)![1],
      accountId: /demo account (\S+),/.exec(out)![1],
      stop: async () => {
        child.kill('SIGTERM');
        await exited;
      },
    };
  }

  it('reuses its demo key, refuses the CLI at once while running, and the CLI lists what it billed', async () => {
    const first = await serveDemo();
    let stopped = false;
    try {
      const timed = async (...args: string[]) => {
        const started = Date.now();
        const stderr = await run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: env() }).then(() => '', (e: { stderr: string }) => e.stderr);
        return { stderr, ms: Date.now() - started };
      };
      // Against the same command's start-up (node and tsx, ~0.5 s idle, seconds on a loaded
      // machine): the refusal waited out lock retries, 11 s, before it said anything.
      const startup = await timed('--help');
      const refused = await timed('balance', first.accountId);
      expect(refused.stderr).toContain('is in use by another Switchyard process');
      expect(refused.ms).toBeLessThan(startup.ms + 2_000);

      const res = await fetch(`${first.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${first.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-haiku', user: 'alice', messages: [{ role: 'user', content: 'Hello!' }] }),
      });
      expect(res.status).toBe(200);
      const answer: any = await res.json();
      await first.stop();
      stopped = true;

      const second = await serveDemo();
      await second.stop();
      expect(second.key).toBe(first.key);

      const runCli = async (...args: string[]) => JSON.parse((await run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: env() })).stdout);
      const keys = await runCli('keys', 'list', '--account', first.accountId);
      expect(keys.data.filter((k: any) => k.name === 'demo' && k.revoked_at === null)).toHaveLength(1);
      const usage = await runCli('usage', first.accountId);
      expect(usage.data).toEqual([
        expect.objectContaining({ model_requested: 'local-haiku', status: 'ok', input_tokens: answer.usage.prompt_tokens, output_tokens: answer.usage.completion_tokens }),
      ]);
      expect(usage.data[0]).toMatchObject({ end_user: 'alice' });
      expect(usage.data[0].cost).toBeGreaterThan(0);
      expect((await runCli('usage', first.accountId, '--end-user', 'bob')).data).toEqual([]);
      const journal = await runCli('ledger', first.accountId);
      expect(journal.data[0]).toMatchObject({ kind: 'capture', amount: -usage.data[0].cost, model: 'local-haiku' });
    } finally {
      if (!stopped) await first.stop();
    }
  }, 300_000);

  it('a busy port is one line naming it, not a stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const err = await run(process.execPath, ['--import', 'tsx', MAIN, 'serve'], { env: { ...env(), SWITCHYARD_DATA_DIR: join(dir, 'busy'), PORT: String(port) } }).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(err?.code).toBe(1);
      expect(err!.stderr.trim()).toBe(`switchyard: cannot listen on 127.0.0.1:${port}: the port is in use by another process (set PORT to a free one)`);
    } finally {
      blocker.close();
    }
  }, 120_000);
});

it('--help names the embedded default (SQLite), its switch SWITCHYARD_EMBEDDED_DB and every variable serve reads', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', MAIN, '--help']);
  expect(stdout).toMatch(/SWITCHYARD_EMBEDDED_DB \(that embedded database: sqlite, the\s+default, or pglite/);
  expect(stdout).not.toMatch(/embedded PGlite/);
  for (const name of ['SWITCHYARD_DATA_DIR', 'DATABASE_URL', 'SWITCHYARD_ADMIN_KEY', 'SWITCHYARD_CONFIG', 'REDIS_URL']) expect(stdout).toContain(name);
});
