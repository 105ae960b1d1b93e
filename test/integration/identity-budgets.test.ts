/**
 * Issue 33, part 2's money through the real HTTP server: a signed-in user's own budget and their
 * group's (the members together), enforced in the hold as key budgets are. On every database: one
 * user's concurrent requests against their own budget, the 402 in each protocol's shape naming the
 * budget, another member unaffected, GET /v1/balance and the admin API showing the spend. On
 * PostgreSQL, the acceptance: two gateway processes, members of one group signed in at a real
 * OpenID Connect provider (oidc-provider), 100 concurrent requests against a small group budget,
 * then the group's spend through the admin API and the CLI.
 *
 * Exactness rests on the premise of key-budgets.test.ts: every request runs into max_tokens at a
 * price where it costs exactly its hold, so a budget for K holds and a bit admits exactly K.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIdentityConfig, type IdentityConfig } from '../../src/config/identity.js';
import { loadConfigFile } from '../../src/config/load-config.js';
import { userIdFor } from '../../src/http/identity/resolve-principal.js';
import { openaiChat } from '../../src/protocols/openai-chat/index.js';
import { ADMIN_KEY, dbTargets, startTestGateway, type TestGateway } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { DESKTOP_CLIENT_ID, GATEWAY_AUDIENCE, startTestIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { pgTarget, type OpenedTarget } from '../ledger/db-targets.js';
import { exactCostCatalog, exactCostConfig, holdFor, responseProblems, waitFor } from '../ledger/http-billing.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const MODEL = 'local-haiku';
const chatBody = (i: number) => ({
  model: MODEL,
  max_tokens: 8,
  // Same length for every i below 1000, so every request holds the same amount.
  messages: [{ role: 'user' as const, content: `Request ${String(i).padStart(3, '0')}: tell me about budgets.` }],
});

const post = (url: string, path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/**
 * A chat request through the official SDK, as a member's client sends it: a 503 (the database
 * slower than the hold's one-second wait, on a loaded machine) is retried as the SDK does; a 402 is not.
 */
async function chat(url: string, token: string, i: number): Promise<{ status: number; body: any }> {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: token, maxRetries: 8 });
  try {
    return { status: 200, body: await client.chat.completions.create(chatBody(i)) };
  } catch (e) {
    if (e instanceof OpenAI.APIError) return { status: e.status ?? 0, body: { error: e.error } };
    throw e;
  }
}

async function json(res: Response, operationId: string, status: number) {
  const body = (await res.json()) as any;
  expect({ status: res.status, body }).toMatchObject({ status });
  expect(await responseProblems(operationId, status, body)).toEqual([]);
  return body;
}

const members = {
  alice: { email: 'alice@acme.test', groups: ['research'] },
  bob: { email: 'bob@acme.test', groups: ['research'] },
  carol: { email: 'carol@acme.test', groups: ['research', 'platform'] },
  dave: { email: 'dave@acme.test', groups: ['research'] },
};

describe.each(dbTargets)('a user\'s own budget ($name)', (target) => {
  const K = 7;
  const catalog = exactCostCatalog(MODEL);
  const H = holdFor(catalog, openaiChat, chatBody(0)).hold;
  let issuer: TestIssuer;
  let identity: IdentityConfig;
  let gw: TestGateway;
  let accountId: string;

  beforeAll(async () => {
    issuer = await startTestIssuer(members);
    identity = buildIdentityConfig(
      { users: { user_budgets: [{ period: 'day', limit: String(BigInt(K) * H + H - 1n) }] }, groups: { platform: { budgets: [{ period: 'month', limit: String(1000n * H) }] } } },
      { SWITCHYARD_OIDC_ISSUER: issuer.issuer, SWITCHYARD_OIDC_AUDIENCE: `${GATEWAY_AUDIENCE},${DESKTOP_CLIENT_ID}` },
    )!;
    gw = await startTestGateway({ target, catalog, identity });
    accountId = (await gw.newAccount(1_000_000_000_000n, 'acme')).accountId;
    identity.defaultAccount = accountId;
  });
  afterAll(async () => {
    await gw?.close();
    await issuer?.close();
  });

  it(`30 concurrent requests of one user with a day budget for ${K}: exactly ${K} pass; another user is unaffected; the 402 names the user's budget in each protocol`, async () => {
    const alice = (await issuer.signIn('alice')).accessToken;
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(gw.url, alice, i)));
    expect(responses.filter((r) => r.status !== 200 && r.status !== 402).map((r) => r.body.error?.message)).toEqual([]);
    expect(responses.filter((r) => r.status === 200).length).toBe(K);
    for (const r of responses.filter((x) => x.status === 402)) {
      expect(r.body.error).toMatchObject({ type: 'insufficient_quota', code: 'budget_exceeded', budget: { scope: 'user', period: 'day' }, required: Number(H) });
      expect(r.body.error.message).toContain("this user's day budget");
    }
    await gw.ledger.settled();
    const balance = await json(await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${alice}` } }), 'getBalance', 200);
    expect(balance.budgets).toEqual([
      expect.objectContaining({ scope: 'user', period: 'day', limit: Number(BigInt(K) * H + H - 1n), spent: Number(BigInt(K) * H), held: 0, remaining: Number(H - 1n) }),
    ]);

    // Anthropic's shape, through its SDK.
    const anthropic = new Anthropic({ baseURL: gw.url, authToken: alice, apiKey: null, maxRetries: 4 });
    // A hold above what is left of the day (a chat request's hold is H; H - 1 is left).
    const refused = await anthropic.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.APIError);
    expect(refused).toMatchObject({ status: 402, error: { type: 'error', error: { type: 'billing_error', budget: { scope: 'user', period: 'day' } } } });

    // Bob's own budget is his own; carol's also carries her group's, which she alone spends here.
    const bob = (await issuer.signIn('bob')).accessToken;
    expect((await post(gw.url, '/v1/chat/completions', bob, chatBody(100))).status).toBe(200);
    const carol = (await issuer.signIn('carol')).accessToken;
    expect((await post(gw.url, '/v1/chat/completions', carol, chatBody(101))).status).toBe(200);
    await gw.ledger.settled();
    const carolBalance = await json(await fetch(`${gw.url}/v1/balance`, { headers: { authorization: `Bearer ${carol}` } }), 'getBalance', 200);
    expect(carolBalance.budgets).toEqual([
      expect.objectContaining({ scope: 'user', period: 'day', spent: Number(H) }),
      expect.objectContaining({ scope: 'group', group: 'platform', period: 'month', spent: Number(H), limit: Number(1000n * H) }),
    ]);
    expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });

    // What an operator sees: a user's budgets (from the groups of their latest token) and a group's.
    const carolId = userIdFor(issuer.issuer, 'carol');
    const ofCarol = await json(await gw.admin(`/admin/users/${carolId}/budgets`), 'adminGetUserBudgets', 200);
    expect(ofCarol).toEqual({ id: carolId, budgets: carolBalance.budgets });
    const ofAlice = await json(await gw.admin(`/admin/users/${userIdFor(issuer.issuer, 'alice')}/budgets`), 'adminGetUserBudgets', 200);
    expect(ofAlice.budgets).toEqual([expect.objectContaining({ scope: 'user', spent: Number(BigInt(K) * H), remaining: Number(H - 1n) })]);
    const platform = await json(await gw.admin('/admin/groups/platform/budgets'), 'adminGetGroupBudgets', 200);
    expect(platform).toEqual({ id: 'platform', budgets: [expect.objectContaining({ scope: 'group', group: 'platform', period: 'month', spent: Number(H) })] });
    expect((await json(await gw.admin('/admin/groups/nobody/budgets'), 'adminGetGroupBudgets', 404)).error.message).toContain('no group "nobody"');
    expect((await json(await gw.admin('/admin/users/usr_unknown/budgets'), 'adminGetUserBudgets', 404)).error.param).toBe('user_id');
    // Alice's usage records carry her id; her refused requests held nothing.
    const records = await gw.ledger.usageRecords(accountId, 100, undefined, { userId: userIdFor(issuer.issuer, 'alice') });
    expect(records.filter((r) => r.cost > 0n).length).toBe(K);
  }, 180_000);
});

/** local-haiku priced so a request capped at max_tokens costs exactly its hold. */
const CATALOG = exactCostConfig();

describe.runIf(pgTarget)('a group budget across two gateway processes on postgres', () => {
  const K = 13;
  const TOTAL = 100;
  let t: OpenedTarget;
  let dir: string;
  let issuer: TestIssuer;
  let children: GatewayProcess[] = [];
  let accountId: string;
  let H: bigint;
  let cliEnv: Record<string, string>;
  const cli = async (...args: string[]) =>
    JSON.parse((await promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...process.env, ...cliEnv }, encoding: 'utf8' })).stdout);

  beforeAll(async () => {
    t = await pgTarget!.open();
    issuer = await startTestIssuer(members);
    dir = mkdtempSync(join(tmpdir(), 'switchyard-group-budget-'));
    writeFileSync(join(dir, 'catalog.yaml'), CATALOG);
    H = holdFor(loadConfigFile(join(dir, 'catalog.yaml')), openaiChat, chatBody(0)).hold;
    accountId = (await t.ledger.createAccount('acme', 1_000_000_000_000n)).id;
    // Each member alone could spend far more; the group together has room for K requests and a bit.
    writeFileSync(join(dir, 'catalog.yaml'), `${CATALOG}
oidc:
  default_account: ${accountId}
  users:
    user_budgets: [{ period: day, limit: ${1000n * H} }]
  groups:
    research:
      budgets: [{ period: day, limit: ${BigInt(K) * H + H - 1n} }]
`);
    const env = {
      DATABASE_URL: t.databaseUrl!, SWITCHYARD_DB_SCHEMA: t.schema!, SWITCHYARD_CONFIG: join(dir, 'catalog.yaml'),
      SWITCHYARD_OIDC_ISSUER: issuer.issuer, SWITCHYARD_OIDC_AUDIENCE: `${GATEWAY_AUDIENCE},${DESKTOP_CLIENT_ID}`, SWITCHYARD_ADMIN_KEY: ADMIN_KEY,
    };
    cliEnv = env;
    children = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
  }, 180_000);
  afterAll(async () => {
    for (const c of children) c.proc.kill('SIGKILL');
    await issuer?.close();
    await t?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`${TOTAL} concurrent requests from 4 members over 2 gateways, group budget for ${K}: spent <= limit, nothing held after, journal = balances`, async () => {
    const names = Object.keys(members);
    const tokens = await Promise.all(names.map(async (n) => (await issuer.signIn(n)).accessToken));
    const responses = await Promise.all(Array.from({ length: TOTAL }, (_, i) => chat(children[i % 2].url, tokens[i % tokens.length], i)));
    expect(responses.filter((r) => r.status !== 200 && r.status !== 402).map((r) => r.body.error?.message)).toEqual([]);
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.length).toBe(K);
    for (const r of ok) expect(r.body.usage.completion_tokens).toBe(8);
    for (const r of responses.filter((x) => x.status === 402)) {
      expect(r.body.error).toMatchObject({ type: 'insufficient_quota', code: 'budget_exceeded', budget: { scope: 'group', group: 'research', period: 'day' } });
      expect(r.body.error.message).toContain('group "research"\'s day budget');
    }

    // Every settle is in (each gateway settles in the background): no hold left pending.
    await waitFor(async () => {
      const pending = await t.ledger.db.selectFrom('holds').select('id').where('account_id', '=', accountId).where('status', '=', 'pending').execute();
      return pending.length === 0 ? true : undefined;
    }, 20_000, 'every hold to be settled');
    const group = await t.ledger.db.selectFrom('budget_usage').selectAll().where('owner', '=', 'group:research').execute();
    expect(group.length).toBe(1);
    expect(group[0]).toMatchObject({ spent: BigInt(K) * H, held: 0n, limit_amount: BigInt(K) * H + H - 1n });
    expect(group[0].spent).toBeLessThanOrEqual(group[0].limit_amount);
    // Each member's own row counts their share; together they are the group's.
    const own = await t.ledger.db.selectFrom('budget_usage').selectAll().where('owner', 'in', names.map((n) => userIdFor(issuer.issuer, n))).execute();
    expect(own.reduce((sum, u) => sum + u.spent, 0n)).toBe(BigInt(K) * H);
    expect(own.every((u) => u.held === 0n)).toBe(true);
    expect(await t.ledger.getAccount(accountId)).toMatchObject({ balance: 1_000_000_000_000n - BigInt(K) * H, held: 0n });
    expect(await t.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });

    // The other protocol's shape on the other instance, once the budget is spent.
    const m = await json(await post(children[1].url, '/v1/messages', tokens[0], { model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' }), 'createMessage', 402);
    expect(m).toMatchObject({ type: 'error', error: { type: 'billing_error', budget: { scope: 'group', group: 'research' } } });

    // The group's spend, as the admin API and the CLI show it.
    const shown = await fetch(`${children[0].url}/admin/groups/research/budgets`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const research = await json(shown, 'adminGetGroupBudgets', 200);
    expect(research).toEqual({ id: 'research', budgets: [{ scope: 'group', group: 'research', period: 'day', limit: Number(BigInt(K) * H + H - 1n), spent: Number(BigInt(K) * H), held: 0, remaining: Number(H - 1n), resets_at: expect.any(String) }] });
    expect(await cli('groups', 'budgets', 'research')).toEqual(research);
    const alice = userIdFor(issuer.issuer, 'alice');
    const ofAlice = await cli('users', 'budgets', alice);
    expect(ofAlice.budgets.map((b: any) => [b.scope, b.group ?? null])).toEqual([['user', null], ['group', 'research']]);
    expect(ofAlice.budgets[1]).toEqual(research.budgets[0]);
  }, 300_000);
});
