import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { SseFrame } from '../protocols/types.js';

/** The one SSE writer: frames every event the same way, honouring backpressure. */
export function formatFrame(frame: SseFrame): string {
  return frame.event ? `event: ${frame.event}\ndata: ${frame.data}\n\n` : `data: ${frame.data}\n\n`;
}

/**
 * Writes frames until they end. Once the client is gone (`signal` aborted or the response
 * destroyed) frames are still pulled, and dropped, until the generator ends by itself: the
 * pipeline sees the same signal, stops generating at its next step and settles what was
 * produced. Returning the generator early instead would end the run at an arbitrary `yield`,
 * where the attempt in flight has not been metered into a charge yet (it would go unbilled).
 */
export async function writeFrames(res: Pick<ServerResponse, 'write' | 'destroyed' | 'once'>, frames: AsyncIterable<SseFrame>, signal: AbortSignal): Promise<void> {
  for await (const frame of frames) {
    if (signal.aborted || res.destroyed) continue;
    if (!res.write(formatFrame(frame))) {
      await Promise.race([once(res as ServerResponse, 'drain'), once(res as ServerResponse, 'close')]);
    }
  }
}
