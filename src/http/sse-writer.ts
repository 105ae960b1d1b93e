import type { ServerResponse } from 'node:http';
import type { SseFrame } from '../protocols/types.js';

/** The one SSE writer: frames every event the same way, honouring backpressure. */
export function formatFrame(frame: SseFrame): string {
  return frame.event ? `event: ${frame.event}\ndata: ${frame.data}\n\n` : `data: ${frame.data}\n\n`;
}

type FrameSink = Pick<ServerResponse, 'write' | 'destroyed' | 'on' | 'off' | 'cork' | 'uncork'>;

/**
 * Writes frames until they end or the client goes away. Leaving the loop early closes the frame
 * generator, which closes the pipeline's run: it aborts the upstream and bills what the attempt
 * in flight produced (see run-completion.ts).
 *
 * The frames one upstream read produces (an upstream packet often carries several events, and one
 * event can make several frames) arrive within one turn of the event loop: they are corked and
 * leave in one write at the end of that turn, headers included for the first, instead of one
 * system call (and one wake-up of the client) per frame.
 */
export async function writeFrames(res: FrameSink, frames: AsyncIterable<SseFrame>, signal: AbortSignal): Promise<void> {
  let corked = false;
  const flush = () => {
    corked = false;
    res.uncork();
  };
  for await (const frame of frames) {
    if (signal.aborted || res.destroyed) return;
    if (!corked) {
      corked = true;
      res.cork();
      setImmediate(flush);
    }
    if (!res.write(formatFrame(frame))) await drainedOrClosed(res);
  }
}

/** Resolves on `drain` or `close`, whichever comes first, and leaves no listener behind. */
function drainedOrClosed(res: FrameSink): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
