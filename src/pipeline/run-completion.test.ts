/**
 * The completion pipeline from inside: startRun with a scripted provider and an in-memory ledger
 * port, so each path (refusal before and after output, outage fallback, client abort, an early
 * call whose hold is refused) is checked event by event, with what was billed.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError, type Request, type StreamEvent, type UpstreamEvent } from '../ir/index.js';
import type { HoldRequest, SettleRequest } from '../ledger/index.js';
import type { Provider, ProviderCall, ProviderConfig } from '../providers/types.js';
import type { Catalog, ModelEntry } from '../routing/index.js';
import { LocalDeploymentHealth } from '../routing/health/index.js';
import { startRun } from './run-completion.js';
import type { CallContext, LedgerPort, PipelineDeps } from './types.js';

/** Upstream behaviours, chosen by the model's upstream name. */
type Script = 'answer' | 'refuse-early' | 'refuse-late' | 'down' | 'overloaded' | 'hang';

const usage = (input: number, output: number) => ({
  input: { noCache: input, cacheRead: 0, cacheWrite: 0 },
  output: { total: output, reasoning: 0 },
});

/** A provider that plays its script and records every call (with its signal). */
function scriptedProvider() {
  const calls: ProviderCall[] = [];
  const provider: Provider = {
    type: 'openai',
    defaultBaseUrl: 'https://scripted.invalid',
    capabilities: () => ({ thinking: { minBudget: 0, forcedToolBlocksThinking: false }, jsonMode: true, serverTools: false, signatures: { family: 'scripted', opaque: false } }),
    async *stream(call) {
      calls.push(call);
      const script = call.target.upstreamModel as Script;
      if (script === 'down') throw new GatewayError('unavailable', 'upstream is down', { retryable: true });
      if (script === 'overloaded') {
        throw new GatewayError('overloaded', 'Overloaded', { retryable: true, retryAfter: 7, details: { upstream: { provider: 'anthropic', status: 529 } } });
      }
      yield { type: 'start', id: `up-${calls.length}`, model: script };
      if (script === 'hang') {
        yield* text('t', 'Hello');
        await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
        throw new GatewayError('api_error', 'aborted');
      }
      if (script === 'refuse-late') yield* text('t', 'I can start');
      if (script.startsWith('refuse')) {
        yield { type: 'finish', attempts: [], finish: { unified: 'refusal', raw: 'refusal' }, usage: usage(10, 3) };
        return;
      }
      yield* text('t', 'The answer.');
      yield { type: 'finish', attempts: [], finish: { unified: 'stop', raw: 'stop' }, usage: usage(10, 4) };
    },
  };
  return { provider, calls };
}

function* text(id: string, s: string): Generator<UpstreamEvent> {
  yield { type: 'text-start', id };
  yield { type: 'text-delta', id, text: s };
  yield { type: 'text-end', id };
}

/** Holds and settles in memory: a balance, the holds taken, the settles received. */
function memoryLedger(balance: bigint, likely = true) {
  const holds: HoldRequest[] = [];
  const settles: SettleRequest[] = [];
  let settled!: () => void;
  const settledOnce = new Promise<void>((r) => (settled = r));
  const port: LedgerPort = {
    holdLikelyPasses: () => likely,
    async placeHold(h) {
      if (h.amount > balance) throw new GatewayError('insufficient_balance', 'insufficient balance');
      holds.push(h);
    },
    extendHold: async () => true,
    release: async () => true,
    async settle(s) {
      settles.push(s);
      settled();
      return { cost: s.charges.reduce((a, c) => a + c.cost, 0n) } as never;
    },
  };
  return { port, holds, settles, settledOnce };
}

const PROVIDER: ProviderConfig = {
  id: 'up',
  type: 'openai',
  baseUrl: 'http://upstream.invalid',
  headers: {},
  timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000, responseMs: 1000 },
  maxRetries: 0,
};

/** 1 and 2 nanodollars per token (rates are femtodollars per token). */
const PRICE = { input: 1_000_000n, output: 2_000_000n, cacheRead: 0n, cacheWrite: 0n, cacheWrite1h: 0n };

function model(id: string, script: Script, fallbacks: string[] = [], fallbackOnUnavailable = false): ModelEntry {
  return {
    id,
    displayName: id,
    deployments: [{ id: `${id}/0`, name: '0', provider: PROVIDER, upstreamModel: script, weight: 1, price: PRICE }],
    routing: { strategy: 'weighted', sessionAffinity: true },
    price: PRICE,
    contextWindow: 100_000,
    capabilities: { tools: true, reasoning: false, images: false },
    fallbacks,
    fallbackOnUnavailable,
    aliases: [],
    created: 0,
  };
}

/** A model on several deployments, named a, b, ...: each plays its script, priced 10x its index + 1. */
function deployed(id: string, scripts: Script[], fallbacks: string[] = []): ModelEntry {
  const deployments = scripts.map((script, i) => {
    const name = 'abc'[i];
    const price = { input: 1_000_000n, output: BigInt(10 * (i + 1)) * 1_000_000n, cacheRead: 0n, cacheWrite: 0n, cacheWrite1h: 0n };
    return { id: `${id}/${name}`, name, provider: PROVIDER, upstreamModel: script, weight: 1, price };
  });
  return { ...model(id, scripts[0], fallbacks, true), deployments };
}

const catalog: Catalog = {
  providers: new Map([['up', PROVIDER]]),
  models: new Map(
    [
      model('answers', 'answer'),
      model('refuses', 'refuse-early', ['answers']),
      model('refuses-late', 'refuse-late', ['answers']),
      model('outage', 'down', ['answers'], true),
      model('hangs', 'hang'),
      deployed('two-places', ['overloaded', 'answer']),
      deployed('nowhere', ['down', 'down'], ['answers']),
    ].map((m) => [m.id, m]),
  ),
  aliases: new Map(),
};

function request(modelId: string, stream: boolean): Request {
  return {
    model: modelId,
    system: [],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    tools: [],
    maxTokens: 100,
    maxTokensDefaulted: false,
    stream,
    reasoning: { enabled: false },
    fast: false,
    fallbacks: 'default',
    ext: {},
    passHeaders: {},
  } as Request;
}

function setup(balance = 1_000_000n, likely = true) {
  const { provider, calls } = scriptedProvider();
  const ledger = memoryLedger(balance, likely);
  const deps: PipelineDeps = {
    catalog,
    ledger: ledger.port,
    providers: { openai: provider },
    limiter: { admit: async () => ({ allowed: true }) as never, adjust: () => undefined },
    holdTtlMs: 60_000,
    health: new LocalDeploymentHealth(),
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    now: Date.now,
  };
  const abort = new AbortController();
  const ctx: CallContext = { requestId: 'req-1', accountId: 'acct', keyId: 'key', signal: abort.signal };
  return { deps, ctx, abort, calls, ledger };
}

async function drain(events: AsyncGenerator<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const ev of events) out.push(ev);
  return out;
}

/** One line per event: what a reviewer reads. */
const lines = (events: StreamEvent[]) =>
  events.map((e) => {
    if (e.type === 'text-delta') return `${e.type} ${e.id} ${e.text}`;
    if (e.type === 'fallback') return `fallback ${e.from}->${e.to} ${e.outcome}`;
    if (e.type === 'start') return `start ${e.model}`;
    if (e.type === 'finish') return `finish ${e.finish.unified} out=${e.usage.output.total}`;
    return 'id' in e ? `${e.type} ${e.id}` : e.type;
  });

describe('startRun', () => {
  it('a refusal before output is invisible but for the fallback after start; both attempts are billed', async () => {
    const { deps, ctx, ledger } = setup();
    const run = await startRun(deps, ctx, request('refuses', true));
    expect(lines(await drain(run.events))).toEqual([
      'start answers',
      'fallback refuses->answers refusal',
      'text-start 1:t',
      'text-delta 1:t The answer.',
      'text-end 1:t',
      'finish stop out=7',
    ]);
    expect(run.summary.attempts).toEqual([
      { model: 'refuses', outcome: 'refusal', reason: 'refusal (refusal)' },
      { model: 'answers', outcome: 'ok' },
    ]);
    await ledger.settledOnce;
    expect(ledger.settles[0].charges.map((c) => [c.model, c.usage.output.total])).toEqual([
      ['refuses', 3],
      ['answers', 4],
    ]);
    expect(ledger.settles[0].record.status).toBe('ok');
  });

  it('a refusal after output, streamed: the shown block is closed, then the fallback, then the next model', async () => {
    const { deps, ctx } = setup();
    const run = await startRun(deps, ctx, request('refuses-late', true));
    expect(lines(await drain(run.events))).toEqual([
      'start refuses-late',
      'text-start 0:t',
      'text-delta 0:t I can start',
      'text-end 0:t',
      'fallback refuses-late->answers refusal',
      'text-start 1:t',
      'text-delta 1:t The answer.',
      'text-end 1:t',
      'finish stop out=7',
    ]);
  });

  it('a refusal after output, collected: the refused text is dropped from the answer but billed', async () => {
    const { deps, ctx, ledger } = setup();
    const run = await startRun(deps, ctx, request('refuses-late', false));
    expect(lines(await drain(run.events))).toEqual([
      'start answers',
      'fallback refuses-late->answers refusal',
      'text-start 1:t',
      'text-delta 1:t The answer.',
      'text-end 1:t',
      'finish stop out=7',
    ]);
    await ledger.settledOnce;
    expect(ledger.settles[0].charges.map((c) => c.model)).toEqual(['refuses-late', 'answers']);
  });

  it('an outage moves on where the model opted in, and the fallback says it was an error', async () => {
    const { deps, ctx, ledger } = setup();
    const run = await startRun(deps, ctx, request('outage', true));
    const events = await drain(run.events);
    expect(lines(events)[1]).toBe('fallback outage->answers error');
    expect(run.summary.attempts.map((a) => a.outcome)).toEqual(['error', 'ok']);
    await ledger.settledOnce;
    // The failed attempt produced nothing: it costs nothing.
    expect(ledger.settles[0].charges.map((c) => c.model)).toEqual(['answers']);
  });

  it('a client that leaves mid-stream stops the upstream call and pays for what it received', async () => {
    const { deps, ctx, abort, calls, ledger } = setup();
    const run = await startRun(deps, ctx, request('hangs', true));
    const seen: string[] = [];
    for await (const ev of run.events) {
      seen.push(ev.type);
      if (ev.type === 'text-delta') {
        abort.abort();
        break;
      }
    }
    expect(seen).toEqual(['start', 'text-start', 'text-delta']);
    expect(calls[0].signal.aborted).toBe(true);
    expect(run.summary.status).toBe('cancelled');
    expect(run.summary.attempts).toEqual([{ model: 'hangs', outcome: 'error', reason: 'client disconnected' }]);
    await ledger.settledOnce;
    const [charge] = ledger.settles[0].charges;
    // The upstream never reported usage: the gateway's own count of "Hello" and the input.
    expect(charge.usage.output.total).toBeGreaterThan(0);
    expect(ledger.settles[0].record.status).toBe('cancelled');
  });

  it('an early upstream call whose hold is refused is cancelled, and nothing is settled', async () => {
    const { deps, ctx, calls, ledger } = setup(1n, true);
    await expect(startRun(deps, ctx, request('hangs', true))).rejects.toMatchObject({ kind: 'insufficient_balance' });
    // The call started while the hold was placed, and was stopped when it was refused.
    expect(calls).toHaveLength(1);
    expect(calls[0].signal.aborted).toBe(true);
    expect(ledger.holds).toEqual([]);
    expect(ledger.settles).toEqual([]);
  });

  it('without the forecast the call waits for the hold: a refused hold starts nothing', async () => {
    const { deps, ctx, calls } = setup(1n, false);
    await expect(startRun(deps, ctx, request('answers', true))).rejects.toMatchObject({ kind: 'insufficient_balance' });
    expect(calls).toEqual([]);
  });
});

describe('startRun: deployments', () => {
  /** random() = 0: the weighted pick takes the first available deployment. */
  function firstPick() {
    const t = setup();
    t.deps.random = () => 0;
    return t;
  }

  for (const stream of [true, false]) {
    it(`a 529 on one deployment moves to another at once; one answer, both hops reported, the served deployment's price (${stream ? 'streamed' : 'collected'})`, async () => {
      const { deps, ctx, calls, ledger } = firstPick();
      const run = await startRun(deps, ctx, request('two-places', stream));
      expect(lines(await drain(run.events))).toEqual(['start two-places', 'text-start 1:t', 'text-delta 1:t The answer.', 'text-end 1:t', 'finish stop out=4']);
      expect(run.summary.attempts).toEqual([
        { model: 'two-places', deployment: 'two-places/a', outcome: 'error', reason: 'Overloaded' },
        { model: 'two-places', deployment: 'two-places/b', outcome: 'ok' },
      ]);
      // Another deployment was available: no provider retries on the first; the last keeps them.
      expect(calls.map((c) => [c.target.upstreamModel, c.target.maxRetries])).toEqual([
        ['overloaded', 0],
        ['answer', undefined],
      ]);
      await ledger.settledOnce;
      expect(ledger.settles[0].charges).toMatchObject([{ model: 'two-places', usage: usage(10, 4), cost: 10n + 4n * 20n }]);
      // The 529's retry-after cools the deployment down; the next request goes to the other one.
      const [a] = deps.health.snapshot(Date.now()).filter((d) => d.id === 'two-places/a');
      expect(a).toMatchObject({ state: 'cooling_down' });
      expect(a.cooldownUntil! - Date.now()).toBeGreaterThan(6_000);
      const again = await startRun(deps, { ...ctx, requestId: 'req-2' }, request('two-places', stream));
      await drain(again.events);
      expect(again.summary.attempts).toEqual([{ model: 'two-places', deployment: 'two-places/b', outcome: 'ok' }]);
    });
  }

  it('every deployment failing: the model\'s fallback chain comes after its deployments', async () => {
    const { deps, ctx } = firstPick();
    const run = await startRun(deps, ctx, request('nowhere', true));
    expect(lines(await drain(run.events))).toEqual(['start answers', 'fallback nowhere->answers error', 'text-start 2:t', 'text-delta 2:t The answer.', 'text-end 2:t', 'finish stop out=4']);
    expect(run.summary.attempts.map((a) => `${a.deployment ?? a.model}=${a.outcome}`)).toEqual(['nowhere/a=error', 'nowhere/b=error', 'answers=ok']);
  });

  it('none available: the deployment whose cooldown ends first is tried rather than none', async () => {
    const { deps, ctx } = firstPick();
    const now = Date.now();
    deps.health.recordFailure('two-places/a', { status: 429, retryAfterMs: 60_000 }, now);
    deps.health.recordFailure('two-places/b', { status: 429, retryAfterMs: 20_000 }, now);
    const run = await startRun(deps, ctx, request('two-places', false));
    await drain(run.events);
    expect(run.summary.attempts).toEqual([{ model: 'two-places', deployment: 'two-places/b', outcome: 'ok' }]);
  });
});
