import { setMaxListeners } from 'node:events';
import { Agent, request } from 'undici';
import { memoryMb } from './processes.js';
import type { Target } from './load.js';

export interface StreamsMemory {
  streams: number;
  /** Streams that had sent their first event when memory was sampled. */
  open: number;
  /** VmRSS of the gateway before opening them, and the highest sample while all were open. */
  idleRssMb: number;
  rssMb: number;
  failures: number;
}

/**
 * Opens `n` slow streams at once (the fake paces its chunks, so they stay open for seconds),
 * waits until each has delivered its first event, samples the gateway's VmRSS a few times, then
 * hangs up on all of them (which also tests that the gateway lets go of them).
 */
export async function measureStreamsMemory(t: Target, n: number, pid: number): Promise<StreamsMemory> {
  const agent = new Agent({ connections: null, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const abort = new AbortController();
  setMaxListeners(n + 10, abort.signal);
  const idleRssMb = memoryMb(pid);
  let open = 0;
  let failures = 0;
  let resolveAll!: () => void;
  const allOpen = new Promise<void>((r) => (resolveAll = r));
  const settle = () => open + failures >= n && resolveAll();
  const one = async () => {
    try {
      const res = await request(t.origin + t.path, { method: 'POST', headers: t.headers, body: t.body, dispatcher: agent, signal: abort.signal });
      if (res.statusCode !== 200) {
        failures++;
        settle();
        await res.body.text();
        return;
      }
      let counted = false;
      for await (const _ of res.body) {
        if (!counted) {
          counted = true;
          open++;
          settle();
        }
      }
    } catch {
      if (!abort.signal.aborted) {
        failures++;
        settle();
      }
    }
  };
  const running = Array.from({ length: n }, one);
  await Promise.race([allOpen, new Promise((r) => setTimeout(r, 30_000))]);
  let rssMb = 0;
  for (let i = 0; i < 5; i++) {
    rssMb = Math.max(rssMb, memoryMb(pid));
    await new Promise((r) => setTimeout(r, 200));
  }
  const openAtSample = open;
  abort.abort();
  await Promise.allSettled(running);
  await agent.destroy().catch(() => undefined);
  return { streams: n, open: openAtSample, idleRssMb, rssMb, failures };
}
