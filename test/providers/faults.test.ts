import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError, type UpstreamEvent } from '../../src/ir/index.js';
import { anthropicProvider } from '../../src/providers/anthropic/index.js';
import { openaiProvider } from '../../src/providers/openai/index.js';
import { closeAgents } from '../../src/providers/transport/index.js';
import type { ProviderConfig } from '../../src/providers/types.js';
import { startFakeUpstream, type FakeUpstream, type Scenario } from '../../tools/fake-upstream/index.js';
import { assertWellFormed, collect, drain, drainSettled, makeCall, providerConfig } from './helpers.js';

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await closeAgents();
  await fake.close();
});

const scenario = (s: Scenario) => ({ 'x-fake-scenario': JSON.stringify(s) });
const anthropic = (s: Scenario, over: Partial<ProviderConfig> = {}) =>
  providerConfig('anthropic', fake.url, { headers: scenario(s), ...over });
const openai = (s: Scenario, over: Partial<ProviderConfig> = {}) =>
  providerConfig('openai', `${fake.url}/v1`, { headers: scenario(s), ...over });

/** Starts an OpenAI call, aborts it once the fake has the request, and times the connection's close. */
async function abortOnceSent(cfg: ProviderConfig, opts: Parameters<typeof makeCall>[1] = {}) {
  const ac = new AbortController();
  const pending = drainSettled(openaiProvider, makeCall(cfg, { ...opts, signal: ac.signal }));
  while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  const abortedAt = Date.now();
  ac.abort();
  const { error } = await pending;
  return { error, closedAfterMs: (await fake.waitClosed(0)) - abortedAt };
}

describe('retries before the first event', () => {
  it('honours retry-after on 429, then succeeds with one result', async () => {
    const t0 = Date.now();
    const { events, error } = await drainSettled(anthropicProvider, makeCall(anthropic({ words: 5, status: 429, failTimes: 1, retryAfter: 1 })));
    expect(error).toBeUndefined();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(fake.requests).toHaveLength(2);
    assertWellFormed(events);
    expect(events.filter((e) => e.type === 'start')).toHaveLength(1);
  });

  it('gives up after maxRetries + 1 attempts on 500 with a retryable error', async () => {
    const { events, error } = await drainSettled(openaiProvider, makeCall(openai({ status: 500 }, { maxRetries: 2 })));
    expect(events).toEqual([]);
    expect(fake.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ kind: 'api_error', retryable: true, status: 500 });
  });

  it('maps 529 to overloaded', async () => {
    const { error } = await drainSettled(anthropicProvider, makeCall(anthropic({ status: 529 }, { maxRetries: 0 })));
    expect(error).toMatchObject({ kind: 'overloaded', status: 529, retryable: true, retryAfter: 1, code: 'overloaded_error' });
  });

  it('retries a connection refused and reports it as unavailable', async () => {
    const cfg = providerConfig('openai', 'http://127.0.0.1:1/v1', { maxRetries: 1 });
    const { error } = await drainSettled(openaiProvider, makeCall(cfg));
    expect(error).toMatchObject({ kind: 'unavailable', retryable: true, code: 'connection_error' });
  });

  it('times out waiting for headers (firstByteMs), retrying first', async () => {
    const cfg = anthropic({ hangBeforeHeaders: true }, { maxRetries: 1, timeouts: { connectMs: 1000, firstByteMs: 300, idleMs: 5000, responseMs: 300 } });
    const { error } = await drainSettled(anthropicProvider, makeCall(cfg));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, code: 'first_byte_timeout' });
    expect(fake.requests).toHaveLength(2);
  });
});

describe('failures after the first event are thrown, never retried', () => {
  it('throws when the upstream resets mid-stream', async () => {
    const { events, error } = await drainSettled(anthropicProvider, makeCall(anthropic({ words: 20, resetAfterEvents: 6 })));
    expect(events.length).toBeGreaterThan(0);
    expect(events[0].type).toBe('start');
    expect(events.some((e) => e.type === 'finish')).toBe(false);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).retryable).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('throws bad_gateway on malformed SSE JSON', async () => {
    for (const cfg of [anthropic({ words: 5, malformed: true }), openai({ words: 5, malformed: true })]) {
      fake.reset();
      const p = cfg.type === 'openai' ? openaiProvider : anthropicProvider;
      const { error } = await drainSettled(p, makeCall(cfg));
      expect(error).toMatchObject({ kind: 'bad_gateway' });
      expect(fake.requests).toHaveLength(1);
    }
  });

  it('throws bad_gateway when the stream ends without a finish', async () => {
    const { events, error } = await drainSettled(openaiProvider, makeCall(openai({ words: 10, endAfterEvents: 4 })));
    expect(events.length).toBeGreaterThan(0);
    expect(error).toMatchObject({ kind: 'bad_gateway', message: 'upstream stream ended early' });
  });

  it('times out an idle stream (idleMs)', async () => {
    const cfg = openai({ words: 10, hangAfterEvents: 3 }, { timeouts: { connectMs: 1000, firstByteMs: 2000, idleMs: 300, responseMs: 2000 } });
    const t0 = Date.now();
    const { events, error } = await drainSettled(openaiProvider, makeCall(cfg));
    expect(events.length).toBeGreaterThan(0);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, code: 'idle_timeout' });
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe('abort', () => {
  it('closes the upstream connection at once on an abort, mid-stream (long before the 4 s answer ends)', async () => {
    const ac = new AbortController();
    const call = makeCall(anthropic({ words: 200, chunkDelayMs: 20 }), { signal: ac.signal });
    const events: UpstreamEvent[] = [];
    let abortedAt = 0;
    let error: unknown;
    try {
      for await (const ev of anthropicProvider.stream(call)) {
        events.push(ev);
        if (events.length === 5) {
          abortedAt = Date.now();
          ac.abort();
        }
      }
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'aborted' });
    const closedAt = await fake.waitClosed(0);
    expect(fake.requests[0].aborted).toBe(true);
    expect(closedAt - abortedAt).toBeLessThan(1_000); // the answer would run for seconds more; a loaded machine needs room
  });

  it('closes a connection still waiting for headers', async () => {
    const { error, closedAfterMs } = await abortOnceSent(openai({ hangBeforeHeaders: true }));
    expect(error).toMatchObject({ code: 'aborted' });
    expect(closedAfterMs).toBeLessThan(1_000); // the answer would run for seconds more; a loaded machine needs room
    expect(fake.requests).toHaveLength(1);
  });

  it('closes the upstream when the consumer stops iterating', async () => {
    const call = makeCall(openai({ words: 200, chunkDelayMs: 20 }));
    for await (const ev of openaiProvider.stream(call)) {
      if (ev.type === 'text-delta') break;
    }
    const stoppedAt = Date.now();
    expect((await fake.waitClosed(0)) - stoppedAt).toBeLessThan(1_000); // the answer would run for seconds more; a loaded machine needs room
    expect(fake.requests[0].aborted).toBe(true);
  });
});

describe('a non-streamed call', () => {
  const json = { request: { stream: false } };

  it('asks for JSON and waits up to responseMs (not firstByteMs) for the whole answer', async () => {
    // 10 words at 40 ms each: the answer comes after ~400 ms, past firstByteMs.
    const cfg = openai({ words: 10, chunkDelayMs: 40 }, { timeouts: { connectMs: 1000, firstByteMs: 150, idleMs: 150, responseMs: 3000 } });
    const events = await drain(openaiProvider, makeCall(cfg, json));
    assertWellFormed(events);
    expect(collect(events).content).toEqual([{ type: 'text', text: expect.stringMatching(/\w/) }]);
    expect(fake.requests[0].body).toMatchObject({ stream: false });
    expect(fake.requests[0].headers.accept).toBe('application/json');
  });

  it('times out after responseMs, retrying first', async () => {
    // The answer would come after 1 s, well within firstByteMs: only responseMs can stop it.
    const cfg = anthropic({ words: 10, chunkDelayMs: 100 }, { maxRetries: 1, timeouts: { connectMs: 1000, firstByteMs: 5000, idleMs: 5000, responseMs: 300 } });
    const { events, error } = await drainSettled(anthropicProvider, makeCall(cfg, json));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, code: 'first_byte_timeout' });
    expect(fake.requests).toHaveLength(2);
  });

  it('a body cut short is a retryable bad_gateway, retried because nothing was yielded', async () => {
    const { events, error } = await drainSettled(anthropicProvider, makeCall(anthropic({ words: 5, endAfterEvents: 2 }, { maxRetries: 1 }), json));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ kind: 'bad_gateway', retryable: true });
    expect(fake.requests).toHaveLength(2);
  });

  it('an abort while the answer is generated closes the connection', async () => {
    const { error, closedAfterMs } = await abortOnceSent(openai({ words: 100, chunkDelayMs: 20 }), json);
    expect(error).toMatchObject({ code: 'aborted' });
    expect(closedAfterMs).toBeLessThan(1_000); // the answer would run for seconds more; a loaded machine needs room
    expect(fake.requests[0].aborted).toBe(true);
  });
});
