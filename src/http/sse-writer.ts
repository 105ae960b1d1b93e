import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { SseFrame } from '../protocols/types.js';

/** The one SSE writer: frames every event the same way, honouring backpressure. */
export function formatFrame(frame: SseFrame): string {
  return frame.event ? `event: ${frame.event}\ndata: ${frame.data}\n\n` : `data: ${frame.data}\n\n`;
}

export async function writeFrames(res: ServerResponse, frames: AsyncIterable<SseFrame>, signal: AbortSignal): Promise<void> {
  for await (const frame of frames) {
    if (signal.aborted || res.destroyed) return;
    if (!res.write(formatFrame(frame))) {
      await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
  }
}
