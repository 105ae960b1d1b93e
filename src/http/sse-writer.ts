import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { SseFrame } from '../protocols/types.js';

/** The one SSE writer: frames every event the same way, honouring backpressure. */
export function formatFrame(frame: SseFrame): string {
  return frame.event ? `event: ${frame.event}\ndata: ${frame.data}\n\n` : `data: ${frame.data}\n\n`;
}

/**
 * Writes frames until they end or the client goes away. Leaving the loop early closes the frame
 * generator, which closes the pipeline's run: it aborts the upstream and bills what the attempt
 * in flight produced (see run-completion.ts).
 */
export async function writeFrames(res: Pick<ServerResponse, 'write' | 'destroyed' | 'once'>, frames: AsyncIterable<SseFrame>, signal: AbortSignal): Promise<void> {
  for await (const frame of frames) {
    if (signal.aborted || res.destroyed) return;
    if (!res.write(formatFrame(frame))) {
      await Promise.race([once(res as ServerResponse, 'drain'), once(res as ServerResponse, 'close')]);
    }
  }
}
