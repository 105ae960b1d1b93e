import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { SseFrame } from '../protocols/types.js';
import { formatFrame, writeFrames } from './sse-writer.js';

/** A response stand-in that records what was written. */
function fakeResponse() {
  const emitter = new EventEmitter();
  const written: string[] = [];
  return Object.assign(emitter, { destroyed: false, written, write: (s: string) => (written.push(s), true) });
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
});
