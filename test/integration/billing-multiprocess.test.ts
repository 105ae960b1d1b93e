/**
 * Issue 4 acceptance with real gateway processes (`src/main.ts serve`) sharing one PostgreSQL
 * schema: 500 requests spread over three gateways against a balance for exactly K; one busy account
 * (issue 20: many keys, one balance, holds folded per account) running dry under load; and a gateway
 * killed with SIGKILL mid-stream whose orphaned hold another instance's reaper releases after
 * the (shortened) TTL. PostgreSQL only: PGlite is one process's embedded database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load-config.js';
import { openaiChat } from '../../src/protocols/openai-chat/index.js';
import { pgTarget, type OpenedTarget } from '../ledger/db-targets.js';
import { exactCostConfig, holdFor, waitFor } from '../ledger/http-billing.js';
import { captureChildLog } from '../support/log-capture.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const K = 29;
const TOTAL = 500;

/** local-haiku priced so a request capped at max_tokens costs exactly its hold; local-slow streams slowly. */
const CONFIG = exactCostConfig(`  - id: local-slow
    provider: local
    upstream_model: local-opus
    price: { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 }
    max_output_tokens: 32000
    tokens_per_second: 5
`);

interface Child { url: string; proc: ChildProcess }

/** Starts `switchyard serve` on a free port and resolves once it logs where it listens. */
function startChild(env: Record<string, string>): Promise<Child> {
  const proc = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  captureChildLog(proc, 'serve', env);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('switchyard is listening'));
      if (line) resolve({ url: JSON.parse(line).url as string, proc });
    });
    proc.stderr!.on('data', (d) => (err += d));
    proc.on('exit', (code, signal) => reject(new Error(`gateway exited (${code ?? signal}) before listening: ${err}${out}`)));
  });
}

/**
 * A request as the official SDKs send it: a 503 (the database busier than the one-second wait a
 * request is given, DECISIONS "Database waits") is retried after its retry-after, up to 8 times; any
 * other answer is final. The assertions below are about money, which a 503 never moves.
 */
async function send(url: string, init: RequestInit): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, init);
    if (res.status !== 503 || attempt === 8) return res;
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000 * (0.5 + Math.random())));
  }
}

describe.runIf(pgTarget)('billing across gateway processes on postgres', () => {
  let t: OpenedTarget;
  let dir: string;
  let children: Child[] = [];
  const catalog = () => loadConfigFile(join(dir, 'catalog.yaml'));

  beforeAll(async () => {
    t = await pgTarget!.open();
    dir = mkdtempSync(join(tmpdir(), 'switchyard-billing-'));
    writeFileSync(join(dir, 'catalog.yaml'), CONFIG);
    const env = { DATABASE_URL: t.databaseUrl!, SWITCHYARD_DB_SCHEMA: t.schema!, SWITCHYARD_CONFIG: join(dir, 'catalog.yaml'), SWITCHYARD_REAPER_INTERVAL_MS: '200' };
    // The victim holds with a 1.5 s TTL and never reaps itself; the other three keep the default
    // TTL (a slow request under load must not expire) and reap every 200 ms.
    const victimEnv = { ...env, SWITCHYARD_HOLD_TTL_MS: '1500', SWITCHYARD_REAPER_INTERVAL_MS: '600000' };
    children = await Promise.all([startChild(env), startChild(env), startChild(env), startChild(victimEnv)]);
  }, 180_000);
  afterAll(async () => {
    for (const c of children) c.proc.kill('SIGKILL');
    await t?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`${TOTAL} requests over 3 gateways, balance for exactly ${K}: ${K} succeed, the rest get 402`, async () => {
    const body = { model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Write a long story about three gateways sharing one ledger.' }] };
    const { hold: H } = holdFor(catalog(), openaiChat, body);
    const account = await t.ledger.createAccount('multi', BigInt(K) * H + H - 1n);
    const { key } = await t.ledger.createKey(account.id);

    const statuses = await Promise.all(
      Array.from({ length: TOTAL }, async (_, i) => {
        const res = await send(`${children[i % 3].url}/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
        });
        const json = (await res.json()) as any;
        if (res.status === 402) expect(json.error.type).toBe('insufficient_quota');
        if (res.status === 200) expect(json.usage.completion_tokens).toBe(8);
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s === 200).length).toBe(K);
    expect(statuses.filter((s) => s === 402).length).toBe(TOTAL - K);
    expect(await t.ledger.getAccount(account.id)).toMatchObject({ balance: H - 1n, held: 0n });
    const captures = (await t.ledger.ledgerEntries(account.id, 1000)).filter((e) => e.kind === 'capture');
    expect(captures.length).toBe(K);
    expect(captures.every((e) => e.amount === -H)).toBe(true);
    expect((await t.ledger.usageRecords(account.id, 1000)).length).toBe(K);
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('one busy account: 600 requests with 6 of its keys over 3 gateways, streamed and not, holds of three sizes: no overdraft, journal = balances, no hold left', async () => {
    // Each answer reaches its ceiling, so each request costs exactly its hold: an overdraft would show
    // as a negative balance.
    const bodies = [8, 16, 24].flatMap((max_tokens) =>
      [false, true].map((stream) => ({ model: 'local-haiku', stream, max_tokens, messages: [{ role: 'user', content: 'Write a long story about one team sharing one balance.' }] })),
    );
    const holds = bodies.map((b) => holdFor(catalog(), openaiChat, b).hold);
    const total = 600;
    // Funds about a quarter of the holds, so the account runs dry while requests are in flight.
    const initial = Array.from({ length: total }, (_, i) => holds[i % bodies.length]).reduce((x, y) => x + y, 0n) / 4n;
    const account = await t.ledger.createAccount('team', initial);
    const keys = await Promise.all(Array.from({ length: 6 }, () => t.ledger.createKey(account.id)));

    const statuses = await Promise.all(
      Array.from({ length: total }, async (_, i) => {
        const body = bodies[i % bodies.length];
        const res = await send(`${children[i % 3].url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys[i % keys.length].key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status === 402) expect(JSON.parse(text).error.type).toBe('insufficient_quota');
        else if (res.status === 200 && body.stream) expect(text).toContain('data: [DONE]');
        return res.status;
      }),
    );
    const served = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([]);
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThan(total);
    // Settles go out after the answers: wait until every hold of the account is resolved.
    await waitFor(async () => {
      const pending = await t.ledger.db.selectFrom('holds').select('id').where('account_id', '=', account.id).where('status', '=', 'pending').execute();
      return pending.length === 0 ? true : undefined;
    }, 20_000, 'every hold of the account to be settled');
    const after = (await t.ledger.getAccount(account.id))!;
    expect(after.held).toBe(0n);
    expect(after.balance).toBeGreaterThanOrEqual(0n);
    const captures = (await t.ledger.ledgerEntries(account.id, 1000)).filter((e) => e.kind === 'capture');
    expect(captures.reduce((sum, e) => sum - e.amount, 0n)).toBe(initial - after.balance);
    const usage = await t.ledger.usageRecords(account.id, 1000);
    expect(usage.length).toBe(served);
    expect(usage.reduce((sum, u) => sum + u.cost, 0n)).toBe(initial - after.balance);
    const keyIds = new Set(keys.map((k) => k.record.id));
    expect(usage.every((u) => keyIds.has(u.keyId!))).toBe(true);
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });

  it('kill -9 during a stream: after the TTL another instance releases the hold; no money created or lost', async () => {
    const victim = children[3];
    const account = await t.ledger.createAccount('victim', 1_000_000_000n);
    const { key } = await t.ledger.createKey(account.id);
    const body = { model: 'local-slow', stream: true, max_tokens: 1000, messages: [{ role: 'user', content: 'Tell me a very long story.' }] };
    const { hold } = holdFor(catalog(), openaiChat, body);

    const res = await fetch(`${victim.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"content":"')) text += new TextDecoder().decode((await reader.read()).value);
    expect(await t.ledger.getAccount(account.id)).toMatchObject({ balance: 1_000_000_000n, held: hold });

    victim.proc.kill('SIGKILL');
    await reader.read().catch(() => undefined);
    const status = await waitFor(async () => {
      const row = await t.ledger.db.selectFrom('holds').select('status').where('id', '=', requestId).executeTakeFirstOrThrow();
      return row.status === 'pending' ? undefined : row.status;
    }, 20_000, 'the orphaned hold to be released');
    expect(status).toBe('expired');
    expect(await t.ledger.getAccount(account.id)).toMatchObject({ balance: 1_000_000_000n, held: 0n });
    expect((await t.ledger.ledgerEntries(account.id)).filter((e) => e.kind === 'capture')).toEqual([]);
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
  });
});
