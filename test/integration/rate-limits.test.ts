/**
 * Per-key rate limits over real HTTP with the official SDKs: limits set and changed through the
 * admin API, the providers' own rate-limit headers on answers, a 429 in the caller's shape with
 * `retry-after` that costs nothing, and (with Redis) one limit shared by two gateway instances.
 */
import { spawn } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../src/app/start-gateway.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { RateLimiter, RedisLimitStore } from '../../src/limits/index.js';
import { dbTargets, localCatalog, startTestGateway, type TestGateway } from '../support/gateway.js';
import { PG_URL } from '../ledger/db-targets.js';
import { REDIS_URL, dropPrefix, uniquePrefix } from '../support/redis-target.js';
import { bodyErrors } from '../support/stream-checks.js';
import { captureGateway, capturedLogOptions } from '../support/log-capture.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ target: dbTargets.at(-1) });
});
afterAll(async () => gw?.close());

const admin = (path: string, method: string, body?: unknown) => gw.admin(path, method, body);

/** A new funded account and a key with these limits, made through the admin API. */
async function limitedKey(limits: { rpm_limit?: number | null; tpm_limit?: number | null }) {
  const { accountId } = await gw.newAccount();
  const res = await admin('/admin/keys', 'POST', { account_id: accountId, name: 'limited', ...limits });
  const body: any = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  expect(await bodyErrors('adminCreateKey', 201, body)).toEqual([]);
  return { accountId, key: body.key as string, id: body.id as string, body };
}

const ask = [{ role: 'user' as const, content: 'Hello' }];
const openai = (key: string, url = gw.url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
const anthropic = (key: string) => new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });

async function account(accountId: string) {
  return (await gw.ledger.getAccount(accountId))!;
}

describe('rate limits through the admin API', () => {
  it('are set on a new key, shown, changed and removed', async () => {
    const { id, body } = await limitedKey({ rpm_limit: 5, tpm_limit: 10_000 });
    expect(body).toMatchObject({ rpm_limit: 5, tpm_limit: 10_000 });
    const changed = await admin(`/admin/keys/${id}`, 'PATCH', { rpm_limit: 7 });
    expect(await changed.json()).toMatchObject({ id, rpm_limit: 7, tpm_limit: 10_000 });
    const removed = await admin(`/admin/keys/${id}`, 'PATCH', { tpm_limit: null, name: 'renamed' });
    const removedBody: any = await removed.json();
    expect(await bodyErrors('adminUpdateKey', 200, removedBody)).toEqual([]);
    expect(removedBody).toMatchObject({ rpm_limit: 7, tpm_limit: null, name: 'renamed' });
    const listed: any = await (await admin(`/admin/keys?account_id=${body.account_id}`, 'GET')).json();
    expect(listed.data.find((k: any) => k.id === id)).toMatchObject({ rpm_limit: 7, tpm_limit: null });
    // A key without limits shows nulls.
    expect((await limitedKey({})).body).toMatchObject({ rpm_limit: null, tpm_limit: null });
  });

  it('refuses limits that are not positive whole numbers, and unknown keys', async () => {
    const { accountId } = await gw.newAccount();
    for (const bad of [{ rpm_limit: 0 }, { tpm_limit: -5 }, { rpm_limit: 1.5 }, { rpm_limit: '10' }, { tpm_limit: 2 ** 31 }]) {
      const res = await admin('/admin/keys', 'POST', { account_id: accountId, ...bad });
      const body: any = await res.json();
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(body.error.param).toMatch(/rpm_limit|tpm_limit/);
    }
    const missing = await admin('/admin/keys/key_nope', 'PATCH', { rpm_limit: 1 });
    expect(missing.status).toBe(404);
    // A misspelt field is refused, not ignored (it would have made an unlimited key).
    const misspelt = await admin('/admin/keys', 'POST', { account_id: accountId, rpm: 5 });
    expect(misspelt.status).toBe(400);
    expect(((await misspelt.json()) as any).error).toMatchObject({ param: 'rpm', message: 'rpm: is not a field of this request' });
    const { id } = await limitedKey({ rpm_limit: 5 });
    expect((await admin(`/admin/keys/${id}`, 'PATCH', { account_id: accountId })).status).toBe(400);
    // A revoked key stays as it was revoked.
    await admin(`/admin/keys/${id}`, 'DELETE');
    const revoked = await admin(`/admin/keys/${id}`, 'PATCH', { rpm_limit: 6 });
    expect(revoked.status).toBe(409);
  });
});

describe('a requests-per-minute limit', () => {
  it('answers with OpenAI rate-limit headers, then refuses with a 429 the openai SDK reads, at no cost', async () => {
    const { key, accountId } = await limitedKey({ rpm_limit: 2 });
    const client = openai(key);
    const remaining = [];
    for (let i = 0; i < 2; i++) {
      const { response } = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).withResponse();
      expect(response.headers.get('x-ratelimit-limit-requests')).toBe('2');
      expect(response.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?s$/);
      remaining.push(response.headers.get('x-ratelimit-remaining-requests'));
    }
    expect(remaining).toEqual(['1', '0']);
    const before = await account(accountId);
    const err: any = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.message).toMatch(/requests per minute.*limit 2/);
    // One request comes back every 30 s.
    expect(Number(err.headers.get('retry-after'))).toBeGreaterThanOrEqual(25);
    expect(Number(err.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    expect(err.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(await bodyErrors('createChatCompletion', 429, err.error ? { error: err.error } : {})).toEqual([]);
    // Refused before the hold: no hold, no charge, no usage record.
    const after = await account(accountId);
    expect(after).toMatchObject({ balance: before.balance, held: 0n });
    const usage: any = await (await admin(`/admin/accounts/${accountId}/usage`, 'GET')).json();
    expect(usage.data).toHaveLength(2);
  });

  it('refuses streams before the first byte, in each protocol, and counts every completion protocol', async () => {
    const { key } = await limitedKey({ rpm_limit: 3 });
    const oa = openai(key);
    const an = anthropic(key);
    const { response } = await an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).withResponse();
    expect(response.headers.get('anthropic-ratelimit-requests-limit')).toBe('3');
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('2');
    expect(Date.parse(response.headers.get('anthropic-ratelimit-requests-reset')!)).toBeGreaterThan(Date.now());
    await oa.responses.create({ model: 'local-haiku', max_output_tokens: 16, input: 'Hello' });
    await oa.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask, stream: true });

    const streamed: any = await an.messages.create({ model: 'local-haiku', max_tokens: 5, messages: ask, stream: true }).catch((e) => e);
    expect(streamed).toBeInstanceOf(Anthropic.RateLimitError);
    expect(streamed.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(Number(streamed.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(streamed.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    const responses: any = await oa.responses.create({ model: 'local-haiku', input: 'Hello', stream: true }).catch((e) => e);
    expect(responses).toBeInstanceOf(OpenAI.RateLimitError);
    // Free endpoints are not counted.
    const counted = await an.messages.countTokens({ model: 'local-haiku', messages: ask });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });

  it('changes through the admin API apply to the very next request', async () => {
    const { key, id } = await limitedKey({ rpm_limit: 1 });
    const client = openai(key);
    await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask });
    await expect(client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await admin(`/admin/keys/${id}`, 'PATCH', { rpm_limit: null });
    const { response } = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).withResponse();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBeNull();
  });
});

describe('a tokens-per-minute limit', () => {
  it('takes the input at once and the output after, then refuses until the debt is repaid', async () => {
    const { key, accountId } = await limitedKey({ tpm_limit: 30 });
    const client = openai(key);
    const { data, response } = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 40, messages: ask }).withResponse();
    const input = data.usage!.prompt_tokens;
    // At admission the bucket gave up the prompt's tokens (the gateway's own count of them).
    expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThanOrEqual(30 - input + 1);
    expect(response.headers.get('x-ratelimit-limit-tokens')).toBe('30');
    // The answer's output tokens are taken once it is settled; the next request then waits.
    expect(data.usage!.completion_tokens).toBeGreaterThan(30 - input);
    await gw.ledger.settled();
    const err: any = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.message).toMatch(/tokens per minute.*limit 30/);
    expect(err.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(Number(err.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await account(accountId)).held).toBe(0n);
  });

  it('refuses a prompt larger than the whole limit, without a retry-after that could never help', async () => {
    const { key, id } = await limitedKey({ tpm_limit: 5 });
    const err: any = await openai(key).chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hello there, how are you today?' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.message).toMatch(/Request too large: \d+ input tokens are more than this key's limit of 5 tokens per minute/);
    expect(err.headers.get('retry-after')).toBeNull();
    // The SDKs would otherwise retry it twice, in vain.
    expect(err.headers.get('x-should-retry')).toBe('false');
    // Raising the limit lets it through at once.
    await admin(`/admin/keys/${id}`, 'PATCH', { tpm_limit: 10_000 });
    await openai(key).chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask });
  });

  it('a refused hold gives its request and input back: a client out of money gets 402s, not a 429', async () => {
    const { key, accountId } = await limitedKey({ rpm_limit: 1, tpm_limit: 1000 });
    await gw.ledger.credit(accountId, -(await account(accountId)).balance, 'empty the account');
    const client = openai(key);
    for (let i = 0; i < 3; i++) {
      const err: any = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).catch((e) => e);
      expect(err.status).toBe(402);
    }
    await gw.ledger.credit(accountId, 1_000_000_000n, 'top up');
    const { response } = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).withResponse();
    // Only this request is gone from the buckets, not the three refused ones.
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(1000 - 20);
  });
});

describe.runIf(REDIS_URL)('limits shared through Redis', () => {
  const quiet = { warn: () => undefined };
  const prefix = uniquePrefix();
  let gateways: Gateway[] = [];
  let limiters: RateLimiter[] = [];
  let second: Ledger | undefined;
  beforeAll(async () => {
    limiters = [new RateLimiter(await RedisLimitStore.connect(REDIS_URL!, prefix), quiet), new RateLimiter(await RedisLimitStore.connect(REDIS_URL!, prefix), quiet)];
    // On PostgreSQL each instance has a ledger (and key cache) of its own, as two processes would.
    if (gw.db.databaseUrl) second = await openLedger({ databaseUrl: gw.db.databaseUrl, schema: gw.db.schema });
    const ledgers = [gw.ledger, second ?? gw.ledger];
    gateways = await Promise.all(
      limiters.map((limiter, i) =>
        startGateway({ ...capturedLogOptions(), port: 0, ledger: ledgers[i], catalog: localCatalog(0), adminKey: gw.adminKey, limiter, redisUrl: REDIS_URL }),
      ),
    );
    for (const g of gateways) captureGateway(g, { adminKey: gw.adminKey }, 'rate-limits');
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    for (const l of limiters) await l.close();
    await second?.close();
    await dropPrefix(REDIS_URL!, prefix);
  });

  it('one key is limited across two gateway instances', async () => {
    const { key } = await limitedKey({ rpm_limit: 2 });
    const [a, b] = gateways.map((g) => openai(key, g.url));
    await a.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask });
    const { response } = await b.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).withResponse();
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    await expect(a.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(b.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });

  it.runIf(PG_URL)('a key changed or revoked on one instance leaves the key cache of the other at once', async () => {
    const { key, id } = await limitedKey({ rpm_limit: 1 });
    const b = openai(key, gateways[1].url);
    // B caches the key with its limit, then refuses the second request.
    await b.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask });
    await expect(b.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    // Lifted through A's admin API: B hears of it through Redis, not after its cache's minute.
    const lifted = await fetch(`${gateways[0].url}/admin/keys/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rpm_limit: null }),
    });
    expect(lifted.status).toBe(200);
    await expect.poll(async () => (await b.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).then(() => 'ok', (e) => e.status)), { timeout: 2000 }).toBe('ok');
    // Revoked through A: B's free endpoints refuse it too (holds always re-check revocation).
    await fetch(`${gateways[0].url}/admin/keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${gw.adminKey}` } });
    await expect.poll(async () => (await b.models.list().then(() => 'ok', (e) => e.status)), { timeout: 2000 }).toBe(401);
  });
});

describe.runIf(REDIS_URL)('when Redis goes away', () => {
  it('requests are admitted without limits, counted and logged, and admitted with limits again once it is back', async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const url = `redis://127.0.0.1:${port}`;
    const start = () => spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    let server = start();
    const warnings: object[] = [];
    try {
      await expect.poll(() => RedisLimitStore.connect(url).then((s) => s.close().then(() => true), () => false), { timeout: 5000 }).toBe(true);
      const limiter = new RateLimiter(await RedisLimitStore.connect(url), { warn: (o) => warnings.push(o) });
      const g = await startGateway({ ...capturedLogOptions(), port: 0, ledger: gw.ledger, catalog: localCatalog(0), adminKey: gw.adminKey, limiter });
      captureGateway(g, { adminKey: gw.adminKey }, 'rate-limits');
      try {
        const { key, accountId } = await limitedKey({ rpm_limit: 1 });
        const client = openai(key, g.url);
        await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask });
        await expect(client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
        server.kill('SIGKILL');
        await new Promise((r) => server.once('exit', r));
        const errorsBefore = await storeErrors(g.url);
        const started = Date.now();
        const { response } = await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).withResponse();
        // Admitted at once (no queueing behind a reconnect), without headers: nothing was checked.
        expect(Date.now() - started).toBeLessThan(2000);
        expect(response.headers.get('x-ratelimit-limit-requests')).toBeNull();
        expect(await storeErrors(g.url)).toBeGreaterThan(errorsBefore);
        expect(warnings.length).toBe(1);
        expect((await account(accountId)).held).toBe(0n);
        // Back (empty, as this Redis keeps nothing): the limit applies again.
        server = start();
        await expect
          .poll(async () => (await client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask }).withResponse()).response.headers.get('x-ratelimit-limit-requests'), { timeout: 10_000, interval: 200 })
          .toBe('1');
        await expect(client.chat.completions.create({ model: 'local-haiku', max_tokens: 5, messages: ask })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
      } finally {
        await g.close();
        await limiter.close();
      }
    } finally {
      server.kill('SIGKILL');
    }
  });
});

async function storeErrors(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^switchyard_rate_limit_store_errors_total (\d+)/m.exec(text)?.[1] ?? 0);
}
