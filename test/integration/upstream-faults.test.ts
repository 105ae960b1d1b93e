/**
 * Upstream faults through the real gateway, seen by clients of each protocol: rate limits and
 * overload with their status and retry-after, retries of 5xx before the first byte, connect /
 * first-byte / idle timeouts, failures mid-stream as in-stream errors, and a client disconnect
 * closing the upstream connection (and billing only what was streamed).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import type { FakeUpstream, Scenario } from '../../tools/fake-upstream/index.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../ledger/http-billing.js';
import { CLIENT_PROTOCOLS, bodyProblems, loadSpec, post, sampleBody, streamProblems, type Answer, type ClientProtocol } from './cross-support.js';

let started: FakeGateway | undefined;
let fake: FakeUpstream;
let gw: TestGateway;
/** Accepts TCP and says nothing: a TLS handshake against it never completes (connect timeout). */
let silent: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
  silent = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  await loadSpec();
  started = await startFakeGateway((f) => {
    const doc = fakeCatalogDocument(f, { maxRetries: 1, timeouts: { connect_ms: 500, first_byte_ms: 800, idle_ms: 800 } }) as any;
    doc.providers['up-silent'] = { type: 'openai', base_url: `https://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, max_retries: 0, timeouts: { connect_ms: 300 } };
    doc.models.push({ id: 'up-silent', provider: 'up-silent', upstream_model: 'gpt-4o-mini', free: true });
    return { catalog: buildCatalog(doc, { [FAKE_KEY_ENV]: 'sk-fake' }) };
  });
  ({ fake, gw } = started);
});
beforeEach(() => {
  fake.reset();
  fake.setScenario(undefined);
});
afterAll(async () => {
  await started?.close();
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent?.close(r));
});

const MODEL: Record<ClientProtocol, string> = { chat: 'up-anthropic', messages: 'up-openai', responses: 'up-anthropic' };

function send(protocol: ClientProtocol, scenario: Scenario, stream = true, model = MODEL[protocol]): Promise<Answer> {
  fake.setScenario(scenario);
  return post(gw.url, gw.key, protocol, sampleBody(protocol, model, stream));
}

describe('errors before the first byte keep their status, in the client protocol', () => {
  it('429 after the retries are exhausted: status and retry-after reach a chat client', async () => {
    const a = await send('chat', { status: 429, retryAfter: 1 });
    expect(fake.requests).toHaveLength(2); // one retry, honouring retry-after
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('1');
    expect(a.json.error).toMatchObject({ type: 'rate_limit_error' });
    expect(bodyProblems('chat', 429, a.json)).toEqual([]);
  });

  it.each(['messages', 'responses'] as const)('429 with a long retry-after is passed straight to a %s client', async (protocol) => {
    const a = await send(protocol, { status: 429, retryAfter: 30 });
    expect(fake.requests).toHaveLength(1); // longer than the retry cap: not waited for
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('30');
    expect(protocol === 'messages' ? a.json.error.type : a.json.error.type).toBe('rate_limit_error');
    expect(bodyProblems(protocol, 429, a.json)).toEqual([]);
  });

  it('529 from upstream: a messages client gets 529 overloaded_error, a chat client 503', async () => {
    const m = await send('messages', { status: 529, retryAfter: 30 }, true, 'up-anthropic');
    expect(m.status).toBe(529);
    expect(m.json).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect(bodyProblems('messages', 529, m.json)).toEqual([]);
    const c = await send('chat', { status: 529, retryAfter: 30 });
    expect(c.status).toBe(503);
    expect(bodyProblems('chat', 503, c.json)).toEqual([]);
  });

  it('500s are retried while nothing was sent to the client', async () => {
    const a = await send('messages', { status: 500, failTimes: 1, words: 5 }, true, 'up-anthropic');
    expect(fake.requests).toHaveLength(2);
    expect(a.status).toBe(200);
    expect(a.frames.at(-1)?.event).toBe('message_stop');
    expect(a.frames.filter((f) => f.event === 'message_start')).toHaveLength(1);
  });

  it('first-byte timeout (after a retry) is a 504 timeout', async () => {
    const a = await send('messages', { hangBeforeHeaders: true }, true, 'up-anthropic');
    expect(fake.requests).toHaveLength(2);
    expect(a.status).toBe(504);
    expect(a.json.error).toMatchObject({ type: 'timeout_error' });
    expect(bodyProblems('messages', 504, a.json)).toEqual([]);
  });

  it('connect timeout (a TLS handshake that never completes) is a 504 timeout', async () => {
    const a = await post(gw.url, gw.key, 'chat', sampleBody('chat', 'up-silent', true));
    expect(a.status).toBe(504);
    expect(a.json.error.code).toBe('connect_timeout');
  });
});

/** The in-stream error ending of each protocol. */
function expectStreamError(protocol: ClientProtocol, a: Answer): void {
  expect(a.status).toBe(200);
  expect(streamProblems(protocol, a.frames)).toEqual([]);
  const tail = a.frames.slice(-2);
  if (protocol === 'chat') {
    expect(tail[0].data.error).toMatchObject({ type: 'server_error' });
    expect(tail[1].data).toBe('[DONE]');
  } else if (protocol === 'messages') {
    expect(a.frames.at(-1)).toMatchObject({ event: 'error', data: { type: 'error', error: { type: expect.any(String) } } });
    expect(a.frames.some((f) => f.event === 'message_stop')).toBe(false);
  } else {
    expect(tail.map((f) => f.event)).toEqual(['error', 'response.failed']);
  }
}

describe('a failure mid-stream becomes an in-stream error and the stream ends cleanly', () => {
  for (const protocol of CLIENT_PROTOCOLS) {
    it(`${protocol}: connection reset after some events`, async () => {
      const a = await send(protocol, { words: 10, resetAfterEvents: 5 });
      expectStreamError(protocol, a);
      expect(fake.requests).toHaveLength(1); // never retried once the client has output
    });

    it(`${protocol}: malformed SSE`, async () => {
      const a = await send(protocol, { words: 10, malformed: 5 });
      expectStreamError(protocol, a);
    });

    it(`${protocol}: idle timeout`, async () => {
      const a = await send(protocol, { words: 10, hangAfterEvents: 5 });
      expectStreamError(protocol, a);
    });
  }
});

describe('client disconnect', () => {
  it('closes the upstream connection within 100 ms and bills only what was streamed', async () => {
    fake.setScenario({ words: 400, chunkDelayMs: 20 });
    const abort = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
      body: JSON.stringify(sampleBody('chat', 'up-anthropic', true)),
      signal: abort.signal,
    });
    const requestId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while ((text.match(/"content":"[^"]/g) ?? []).length < 5) text += decoder.decode((await reader.read()).value);
    const abortedAt = Date.now();
    abort.abort();
    const closedAt = await fake.waitClosed(0);
    expect(closedAt - abortedAt).toBeLessThan(1_000); // seconds before the answer would end; room for a loaded machine
    expect(fake.requests[0].aborted).toBe(true);

    const record = await waitForRecord(requestId);
    expect(record.status).toBe('cancelled');
    expect(record.tokens.output).toBeGreaterThanOrEqual(5n);
    expect(record.tokens.output).toBeLessThan(100n); // 400 words were on offer
    expect(record.cost).toBeGreaterThan(0n);
  });
});

describe('a non-streamed request gets a non-streamed upstream call', () => {
  it('an answer generated for longer than first_byte_ms is waited for (response_ms)', async () => {
    // 10 words at 120 ms: the whole answer comes after 1.2 s, past first_byte_ms (800).
    const a = await send('chat', { words: 10, chunkDelayMs: 120 }, false);
    expect(a.status, a.text).toBe(200);
    expect(fake.requests[0].body).toMatchObject({ stream: false });
    expect(a.json.choices[0].message.content).toMatch(/\w/);
  });

  it('a ceiling above 21,333 tokens (an answer that may take over 10 minutes) still streams upstream, answered whole', async () => {
    fake.setScenario({ words: 5 });
    const short = await post(gw.url, gw.key, 'messages', sampleBody('messages', 'up-anthropic', false));
    const long = await post(gw.url, gw.key, 'messages', sampleBody('messages', 'up-anthropic', false, { max_tokens: 21_334 }));
    expect([short.status, long.status]).toEqual([200, 200]);
    expect(fake.requests.map((r) => (r.body as any).stream)).toEqual([false, true]);
    expect(long.json.content).toEqual(short.json.content);
    expect(bodyProblems('messages', 200, long.json)).toEqual([]);
  });

  it.each(CLIENT_PROTOCOLS)('%s: a connection dropped before the answer is retried, then an error in the client protocol', async (protocol) => {
    const a = await send(protocol, { words: 10, resetAfterEvents: 5 }, false);
    expect(fake.requests).toHaveLength(2);
    expect(a.status).toBe(503);
    expect(bodyProblems(protocol, a.status, a.json)).toEqual([]);
  });

  it('a client that disconnects stops the upstream call and pays for the input only', async () => {
    fake.setScenario({ words: 400, chunkDelayMs: 20 });
    const before = (await gw.ledger.getAccount(gw.accountId))!;
    const abort = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` },
      body: JSON.stringify(sampleBody('chat', 'up-anthropic', false)),
      signal: abort.signal,
    }).catch(() => undefined);
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100));
    const abortedAt = Date.now();
    abort.abort();
    await pending;
    const closedAt = await fake.waitClosed(0);
    expect(closedAt - abortedAt).toBeLessThan(1_000); // seconds before the answer would end; room for a loaded machine
    expect(fake.requests[0].aborted).toBe(true);

    // The request id never reached the client; this is the file's only cancelled request without output.
    const record = await waitFor(
      async () => (await gw.ledger.usageRecords(gw.accountId)).find((r) => r.status === 'cancelled' && r.tokens.output === 0n),
      10_000,
      'the usage record of the cancelled request',
    );
    expect(record.tokens.output).toBe(0n);
    expect(record.tokens.inputNoCache).toBeGreaterThan(0n);
    const after = (await gw.ledger.getAccount(gw.accountId))!;
    expect(after.held).toBe(0n);
    expect(after.balance).toBe(before.balance - record.cost);
  });
});

async function waitForRecord(requestId: string) {
  for (let i = 0; i < 200; i++) {
    const hit = (await gw.ledger.usageRecords(gw.accountId)).find((r) => r.requestId === requestId);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no usage record for ${requestId}`);
}
