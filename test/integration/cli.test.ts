/**
 * The admin CLI as an operator runs it: `node --import tsx src/main.ts <command>` in its own
 * process, on PostgreSQL in a fresh schema (DATABASE_URL + SWITCHYARD_DB_SCHEMA) when configured,
 * else on PGlite in a temporary SWITCHYARD_DATA_DIR. Each start costs seconds, so the commands
 * run as one scenario.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';
import { pgTarget, type OpenedTarget } from '../ledger/db-targets.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const run = promisify(execFile);

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
  }, 60_000);

  it('accounts create|show, keys create|list|revoke, credit and balance', async () => {
    const account = await cli('accounts', 'create', 'acme', '--balance', '5000');
    expect(account).toMatchObject({ name: 'acme', balance: '5000', held: '0', available: '5000' });
    const id = account.id as string;

    // Independent commands run at once on PostgreSQL; PGlite's data directory takes one process at a time.
    const [created, entry, zeroCredit, missing, notANumber, tooLarge, badLimit, badModel] = await together(
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
    expect(badModel).toContain('--models: model "gpt-nope" is not in the catalog');
    expect(badLimit).toContain('--tpm must be a whole number from 1');
    expect(notANumber).toContain('<amount> must be a whole number of nanodollars');
    expect(tooLarge).toContain('must be at most 9007199254740991');
    expect(created.key).toMatch(/^sk-sy-/);
    expect(created.record).toMatchObject({ accountId: id, name: 'ci', revokedAt: null, rpmLimit: 60, tpmLimit: null });
    const limited = await cli('keys', 'update', created.record.id, '--rpm', 'none', '--tpm', '100000', '--models', 'local-haiku,local-haiku');
    expect(limited).toMatchObject({ rpmLimit: null, tpmLimit: 100000, allowedModels: ['local-haiku'] });
    expect(entry).toMatchObject({ kind: 'credit', amount: '2500', balanceAfter: '7500', reason: 'invoice 7' });
    expect(zeroCredit).toContain('must not be zero');
    expect(missing).toContain('no account acct_missing');

    const [balance, shown, revoked, listedAccounts] = await together(
      () => cli('balance', id),
      () => cli('accounts', 'show', id),
      () => cli('keys', 'revoke', created.record.id),
      () => cli('accounts', 'list'),
    );
    expect(listedAccounts.map((a: any) => a.id)).toContain(id);
    expect(balance).toEqual({ account_id: id, balance: '7500', held: '0', available: '7500', unit: 'nanodollars' });
    expect(shown).toMatchObject({ id, balance: '7500' });
    expect(revoked.revokedAt).not.toBeNull();
    const listed = await cli('keys', 'list', '--account', id);
    expect(listed).toEqual([expect.objectContaining({ id: created.record.id, revokedAt: revoked.revokedAt })]);

    // What the CLI wrote is the ledger the gateway reads: journaled, exact, and the key is dead.
    const ledger = pg?.ledger ?? (await openLedger({ dataDir: dir }));
    try {
      expect(await ledger.authenticate(created.key)).toBeUndefined();
      expect((await ledger.ledgerEntries(id)).map((e) => [e.amount, e.reason])).toEqual([[2500n, 'invoice 7'], [5000n, 'initial balance']]);
      expect(await ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
    } finally {
      if (!pg) await ledger.close();
    }
  }, 180_000);
});
