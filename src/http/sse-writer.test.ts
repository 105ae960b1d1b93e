import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { SseFrame } from '../protocols/types.js';
import { formatFrame, writeFrames } from './sse-writer.js';

/** A response stand-in that records each write, and what was handed to `end()`. */
function fakeResponse() {
  const emitter = new EventEmitter();
  const written: string[] = [];
  const state = { full: false, ended: undefined as string | undefined | null };
  return Object.assign(emitter, {
    destroyed: false,
    written,
    state,
    write: (s: string): boolean => {
      written.push(s);
      return !state.full;
    },
    end: (s?: string) => {
      if (s) written.push(s);
      state.ended = s ?? null;
    },
    destroy() {
      this.destroyed = true;
      emitter.emit('close');
    },
  });
}

const turn = () => new Promise((r) => setTimeout(r, 1));

describe('writeFrames', () => {
  it('frames named and unnamed events', () => {
    expect(formatFrame({ event: 'ping', data: '{"type":"ping"}' })).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(formatFrame({ data: '[DONE]' })).toBe('data: [DONE]\n\n');
  });

  it('after a disconnect, stops writing and closes the frame generator (which ends the run)', async () => {
    const res = fakeResponse();
    const abort = new AbortController();
    let closed = false;
    let ranToEnd = false;
    async function* frames(): AsyncGenerator<SseFrame> {
      try {
        yield { data: '1' };
        await turn();
        yield { data: '2' };
        abort.abort(); // the client goes away while the run is mid-stream
        yield { data: '3' };
        yield { data: '4' };
        ranToEnd = true;
      } finally {
        closed = true;
      }
    }
    await writeFrames(res, frames(), abort.signal);
    expect(res.written).toEqual(['data: 1\n\n']);
    expect(ranToEnd).toBe(false);
    expect(closed).toBe(true);
  });

  it('joins the frames of one event-loop turn into one write; the last ones leave with end()', async () => {
    const res = fakeResponse();
    async function* frames(): AsyncGenerator<SseFrame> {
      yield { data: '1' };
      yield { data: '2' };
      yield { data: '3' };
      await turn(); // the next upstream read
      yield { event: 'e', data: '4' };
      await turn();
      yield { data: '5' };
      yield { data: '6' };
    }
    await writeFrames(res, frames(), new AbortController().signal, { coalesceMs: 0 });
    expect(res.written).toEqual(['data: 1\n\ndata: 2\n\ndata: 3\n\n', 'event: e\ndata: 4\n\n', 'data: 5\n\ndata: 6\n\n']);
    expect(res.state.ended).toBe('data: 5\n\ndata: 6\n\n');
  });

  it('delivers every frame, the last ones included, over a real HTTP response', async () => {
    async function* frames(): AsyncGenerator<SseFrame> {
      yield { data: '1' };
      await turn();
      yield { data: '2' };
      await new Promise((r) => setTimeout(r, 10));
      yield { data: 'last' };
      yield { data: '[DONE]' };
    }
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void writeFrames(res, frames(), new AbortController().signal);
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(await res.text()).toBe('data: 1\n\ndata: 2\n\ndata: last\n\ndata: [DONE]\n\n');
    } finally {
      server.close();
    }
  });

  it('joins the frames that follow a write within coalesceMs; the first frame, and one after a quiet spell, wait only for their turn', async () => {
    const res = fakeResponse();
    const seen: string[][] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    async function* frames(): AsyncGenerator<SseFrame> {
      yield { data: '1' };
      await turn();
      seen.push([...res.written]); // the first frame did not wait for the bound
      yield { data: '2' }; // each in its own upstream read, right after a write
      await turn();
      yield { data: '3' };
      await turn();
      seen.push([...res.written]); // 2 and 3 wait for company
      await sleep(300);
      seen.push([...res.written]); // ... and leave together once the bound has passed
      yield { data: '4' }; // after a quiet spell
      await turn();
      seen.push([...res.written]);
      yield { data: '5' };
    }
    await writeFrames(res, frames(), new AbortController().signal, { coalesceMs: 150 });
    expect(seen).toEqual([
      ['data: 1\n\n'],
      ['data: 1\n\n'],
      ['data: 1\n\n', 'data: 2\n\ndata: 3\n\n'],
      ['data: 1\n\n', 'data: 2\n\ndata: 3\n\n', 'data: 4\n\n'],
    ]);
    expect(res.written).toHaveLength(4);
    expect(res.state.ended).toBe('data: 5\n\n'); // the end never waits for the bound
  });
});

describe('backpressure', () => {
  it('stops pulling frames while the client is slow, resumes on drain, and leaves no listener behind', async () => {
    const res = fakeResponse();
    res.state.full = true;
    let pulled = 0;
    async function* frames(): AsyncGenerator<SseFrame> {
      for (let i = 0; i < 20; i++) {
        pulled++;
        yield { data: String(i) };
        await turn();
      }
    }
    const writing = writeFrames(res, frames(), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 30));
    expect(pulled).toBeLessThanOrEqual(2); // held at the first full write
    res.state.full = false;
    res.emit('drain');
    await writing;
    expect(pulled).toBe(20);
    expect(res.written.join('')).toBe(Array.from({ length: 20 }, (_, i) => `data: ${i}\n\n`).join(''));
    expect(res.listenerCount('drain') + res.listenerCount('close')).toBe(0);
  });

  it('cuts off a client that leaves its buffer full past the send timeout, and ends the frames', async () => {
    const res = fakeResponse();
    res.state.full = true;
    let closed = false;
    async function* frames(): AsyncGenerator<SseFrame> {
      try {
        for (let i = 0; ; i++) {
          yield { data: String(i) };
          await turn();
        }
      } finally {
        closed = true;
      }
    }
    const started = Date.now();
    await writeFrames(res, frames(), new AbortController().signal, { sendTimeoutMs: 50 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(res.destroyed).toBe(true);
    expect(closed).toBe(true);
    expect(res.listenerCount('drain') + res.listenerCount('close')).toBe(0);
  });
});
