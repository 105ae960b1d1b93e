import { Collector, type Request, type UpstreamEvent } from '../../src/ir/index.js';
import type { Provider, ProviderCall, ProviderConfig, Target } from '../../src/providers/types.js';
import { baseRequest } from '../support/ir-fixtures.js';

export { baseRequest };

/** The recorded transcripts, in shared/ beside the repository (as CI lays it out). */
export { REFERENCE_PRESENT, TRANSCRIPTS_DIR as TRANSCRIPTS } from '../../tools/reference.js';


let seq = 0;

export function providerConfig(type: 'openai' | 'anthropic', baseUrl: string, over: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    // A fresh id per config: each test gets its own Agent with its own timeouts.
    id: `${type}-test-${seq++}`,
    type,
    baseUrl,
    apiKey: 'sk-test',
    headers: {},
    timeouts: { connectMs: 2_000, firstByteMs: 5_000, idleMs: 5_000, responseMs: 5_000 },
    maxRetries: 2,
    ...over,
  };
}

export function makeCall(provider: ProviderConfig, opts: { request?: Partial<Request>; target?: Partial<Target>; signal?: AbortSignal } = {}): ProviderCall {
  return {
    request: baseRequest(opts.request),
    target: { provider, modelId: 'test-model', upstreamModel: 'upstream-model', ...opts.target },
    requestId: 'req_test',
    signal: opts.signal ?? new AbortController().signal,
  };
}

export async function drain(p: Provider, call: ProviderCall): Promise<UpstreamEvent[]> {
  const out: UpstreamEvent[] = [];
  for await (const ev of p.stream(call)) out.push(ev);
  return out;
}

/** Drain, keeping the events yielded before a throw. */
export async function drainSettled(p: Provider, call: ProviderCall): Promise<{ events: UpstreamEvent[]; error?: unknown }> {
  const events: UpstreamEvent[] = [];
  try {
    for await (const ev of p.stream(call)) events.push(ev);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

export function collect(events: UpstreamEvent[]) {
  const c = new Collector();
  for (const ev of events) c.push(ev);
  return c;
}

/** Structural check: start first, finish last, every block opened once and closed once (a server tool's result is whole). */
export function assertWellFormed(events: UpstreamEvent[]): void {
  if (events[0]?.type !== 'start') throw new Error(`first event is ${events[0]?.type}`);
  if (events.at(-1)?.type !== 'finish') throw new Error(`last event is ${events.at(-1)?.type}`);
  const open = new Set<string>();
  const seen = new Set<string>();
  for (const ev of events.slice(1, -1)) {
    if (ev.type === 'server-tool-result') {
      // A whole block in one event.
      if (seen.has(ev.id)) throw new Error(`block ${ev.id} opened twice`);
      seen.add(ev.id);
    } else if (ev.type.endsWith('-start')) {
      const id = (ev as { id: string }).id;
      if (seen.has(id)) throw new Error(`block ${id} opened twice`);
      seen.add(id);
      open.add(id);
    } else if (ev.type.endsWith('-end')) {
      const id = (ev as { id: string }).id;
      if (!open.delete(id)) throw new Error(`block ${id} closed without being open`);
    } else if ('id' in ev && !open.has((ev as { id: string }).id)) {
      throw new Error(`${ev.type} for block ${(ev as { id: string }).id} that is not open`);
    }
  }
  if (open.size > 0) throw new Error(`blocks left open: ${[...open].join(',')}`);
}
