/**
 * Request bodies through the real server: credentials are checked from the headers before a body
 * is read (a stranger's large body gets its 401 at once, and the connection is closed rather than
 * drained), and the bytes of bodies read at once are bounded.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

const DECLARED = 30 * 1024 * 1024;
const SENT = 256 * 1024;

/**
 * Declares a 30 MB JSON body, sends 256 KB of it and waits for the answer without sending the
 * rest. Only a server that answers before reading the body can answer at all.
 */
function partialBody(url: string, headers: Record<string, string>, declared = DECLARED): Promise<{ status: number; connection?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(declared), ...headers },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        resolve({ status: res.statusCode!, connection: res.headers.connection, body });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.write(`{"model":"local-haiku","messages":[{"role":"user","content":"${'x'.repeat(SENT)}`);
  });
}

describe('authentication before the body', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ bodyBudgetBytes: 1024 * 1024, bodyBudgetWaitMs: 1_000 });
  });
  afterAll(async () => gw?.close());

  it('answers 401 to unauthenticated large bodies without reading them', async () => {
    const before = process.memoryUsage().rss;
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => partialBody(gw.url, i % 2 ? { authorization: 'Bearer sk-sy-wrong' } : {})),
    );
    const grown = (process.memoryUsage().rss - before) / 2 ** 20;
    console.log(`24 unauthenticated ${DECLARED / 2 ** 20} MB bodies: statuses ${[...new Set(answers.map((a) => a.status))]}, RSS grew ${grown.toFixed(0)} MB`);
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.connection).toBe('close');
      expect(JSON.parse(a.body).error.type).toBe('authentication_error');
    }
  });

  it('an authenticated body waits for the budget and is refused with a 503 and retry-after only after the wait', async () => {
    // A 1 MiB budget: one body declared at 30 MB holds all of it while its bytes do not arrive.
    const held = partialBody(gw.url, { authorization: `Bearer ${gw.key}` });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-haiku', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    const waited = Date.now() - started;
    const body: any = await res.json();
    console.log(`a small body behind a held budget: ${res.status} after ${waited} ms`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(body.error.message).toContain('too many request bodies');
    expect(waited).toBeGreaterThanOrEqual(900);
    void held.catch(() => undefined);
  });
});

describe('a fair body budget', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // The default budget (64 MiB) and the default wait.
    gw = await startTestGateway();
  });
  afterAll(async () => gw?.close());

  it('two slow 32 MiB bodies on one key do not make another key wait', async () => {
    const slow = [partialBody(gw.url, { authorization: `Bearer ${gw.key}` }, 32 * 1024 * 1024), partialBody(gw.url, { authorization: `Bearer ${gw.key}` }, 32 * 1024 * 1024)];
    await new Promise((r) => setTimeout(r, 300));
    const other = await gw.newAccount();
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(res.status).toBe(200);
      waits.push(Date.now() - started);
    }
    console.log(`another key behind two slow 32 MiB bodies: answered in ${waits.join(', ')} ms`);
    expect(Math.max(...waits)).toBeLessThan(1_000);
    for (const s of slow) void s.catch(() => undefined);
  });
});

/** Declares a body and sends it one byte every `everyMs`, until the server answers; resolves with the answer. */
function tricklingBody(url: string, headers: Record<string, string>, path = '/v1/chat/completions', everyMs = 1_000): Promise<{ status: number; connection?: string; body: string; afterMs: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(1024 * 1024), ...headers } });
    const timer = setInterval(() => req.write('{'), everyMs);
    req.on('response', (res) => {
      clearInterval(timer);
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        resolve({ status: res.statusCode!, connection: res.headers.connection, body, afterMs: Date.now() - started });
        req.destroy();
      });
    });
    req.on('error', (e) => {
      clearInterval(timer);
      reject(e);
    });
    req.write('{');
  });
}

describe('a body that arrives too slowly', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Seconds instead of the defaults (8 KiB/s after 10 s; 300 s in all), so the test is short.
    gw = await startTestGateway({ bodyArrival: { graceMs: 1_500, minBytesPerSecond: 1024, timeoutMs: 60_000 } });
  });
  afterAll(async () => gw?.close());

  it('is cut with a 408 in the route\'s shape once it falls below the minimum rate, while another key is served at once', async () => {
    const chat = tricklingBody(gw.url, { authorization: `Bearer ${gw.key}` });
    const messages = tricklingBody(gw.url, { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, '/v1/messages');
    const other = await gw.newAccount();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.status).toBe(200);
    const [c, m] = await Promise.all([chat, messages]);
    expect(c.status).toBe(408);
    expect(c.connection).toBe('close');
    expect(JSON.parse(c.body).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('below the minimum of 1024') });
    expect(m.status).toBe(408);
    expect(JSON.parse(m.body)).toMatchObject({ type: 'error', error: { message: expect.stringContaining('request body arrived') } });
    // Cut within a second or two of the grace, not after minutes.
    expect(Math.max(c.afterMs, m.afterMs)).toBeLessThan(5_000);
  });
});

describe('a body that is not whole by the deadline', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ bodyArrival: { graceMs: 60_000, minBytesPerSecond: 0, timeoutMs: 1_500 } });
  });
  afterAll(async () => gw?.close());

  it('is cut with a 408 at the deadline, however fast its bytes came', async () => {
    const answer = await tricklingBody(gw.url, { authorization: `Bearer ${gw.key}` }, '/v1/chat/completions', 10);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body).error.message).toContain('did not arrive within 2 s');
    expect(answer.afterMs).toBeLessThan(4_000);
  });
});
