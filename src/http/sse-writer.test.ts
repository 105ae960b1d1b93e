import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { SseFrame } from '../protocols/types.js';
import { formatFrame, writeFrames } from './sse-writer.js';

/** A response stand-in that records what was written, and what left in each uncorked batch. */
function fakeResponse() {
  const emitter = new EventEmitter();
  const written: string[] = [];
  const batches: string[][] = [];
  let buffer: string[] = [];
  let corks = 0;
  const flush = () => {
    if (buffer.length) batches.push(buffer);
    buffer = [];
  };
  return Object.assign(emitter, {
    destroyed: false,
    written,
    batches,
    write: (s: string): boolean => {
      written.push(s);
      buffer.push(s);
      if (corks === 0) flush();
      return true;
    },
    cork: () => void corks++,
    uncork: () => {
      if (corks > 0 && --corks === 0) flush();
    },
  });
}

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
        abort.abort(); // the client goes away while the run is mid-stream
        yield { data: '2' };
        yield { data: '3' };
        ranToEnd = true;
      } finally {
        closed = true;
      }
    }
    await writeFrames(res as any, frames(), abort.signal);
    expect(res.written).toEqual(['data: 1\n\n']);
    expect(ranToEnd).toBe(false);
    expect(closed).toBe(true);
  });

  it('frames produced in one turn of the event loop leave together; later ones in a new write', async () => {
    const res = fakeResponse();
    async function* frames(): AsyncGenerator<SseFrame> {
      yield { data: '1' };
      yield { data: '2' };
      yield { data: '3' };
      await new Promise((r) => setTimeout(r, 5)); // the next upstream read
      yield { data: '4' };
    }
    await writeFrames(res as any, frames(), new AbortController().signal);
    await new Promise((r) => setImmediate(r));
    expect(res.batches).toEqual([['data: 1\n\n', 'data: 2\n\n', 'data: 3\n\n'], ['data: 4\n\n']]);
  });
});

describe('backpressure', () => {
  it('waits for drain when the client is slow, and leaves no listener behind', async () => {
    const res = fakeResponse();
    let full = true;
    res.write = (s: string) => (res.written.push(s), !full);
    async function* frames(): AsyncGenerator<SseFrame> {
      for (let i = 0; i < 20; i++) yield { data: String(i) };
    }
    const writing = writeFrames(res as any, frames(), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 5));
    expect(res.written).toHaveLength(1); // stopped at the first full write
    full = false;
    res.emit('drain');
    await writing;
    expect(res.written).toHaveLength(20);
    expect(res.listenerCount('drain') + res.listenerCount('close')).toBe(0);
  });
});
