import type { SseFrame } from '../protocols/types.js';

/** The one SSE writer: frames every event the same way, honouring backpressure. */
export function formatFrame(frame: SseFrame): string {
  return frame.event ? `event: ${frame.event}\ndata: ${frame.data}\n\n` : `data: ${frame.data}\n\n`;
}

/**
 * How long a client may leave written frames unread before it is treated as gone (nginx's
 * `send_timeout` is the same idea, 60 s by default). Without it, a client that stops reading but
 * keeps its connection would keep its run, its upstream call and its hold alive for ever.
 */
export const DEFAULT_SEND_TIMEOUT_MS = 60_000;

/**
 * How long a frame may wait for the ones that follow it: after a write, the frames of the next
 * `SSE_COALESCE_MS` leave together in one write. A frame that follows a quiet spell (the first
 * one included) waits only for the end of its event-loop turn, so time to first token does not
 * move; a token of a fast burst is held at most this long, far below what a reader can see (one
 * frame of a 60 Hz screen is 16 ms).
 */
export const SSE_COALESCE_MS = 4;

/** What the writer needs of a ServerResponse. */
interface FrameSink {
  readonly destroyed: boolean;
  write(chunk: string | Uint8Array): boolean;
  end(chunk?: string | Uint8Array): unknown;
  destroy(): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

export interface WriteFramesOptions {
  /** See DEFAULT_SEND_TIMEOUT_MS. */
  sendTimeoutMs?: number;
  /** Applied to each frame's payload: credentials never leave (see redact.ts). */
  redact?: (text: string) => string;
  /** See SSE_COALESCE_MS (0: one write per event-loop turn). */
  coalesceMs?: number;
  /** The stream's framing: SSE, or a protocol's own (`StreamFraming`: a frame that comes out empty is not sent). */
  format?: (frame: SseFrame) => string | Uint8Array;
}

/**
 * Writes frames until they end or the client goes away, then ends the response. Leaving the loop early closes the frame
 * generator, which closes the pipeline's run: it aborts the upstream and bills what the attempt
 * in flight produced (see pipeline/run-completion.ts and bill-run.ts).
 *
 * Frames are joined and written together (one HTTP chunk, one system call, one wake-up of the
 * client) instead of once per frame: those of one event-loop turn always (an upstream packet often
 * carries several events, and one event can make several frames), and those of the
 * `coalesceMs` after a write (an upstream that sends each token in its own packet). The last ones
 * are handed to `res.end()`, so they leave with the terminating chunk. (Not `cork()` then
 * `write()` then `end()`: on Node 24 that drops what was corked.)
 */
export async function writeFrames(
  res: FrameSink,
  frames: AsyncIterable<SseFrame>,
  signal: AbortSignal,
  { sendTimeoutMs = DEFAULT_SEND_TIMEOUT_MS, redact = (text) => text, coalesceMs = SSE_COALESCE_MS, format = formatFrame }: WriteFramesOptions = {},
): Promise<void> {
  let pending: Array<string | Uint8Array> = [];
  const take = () => {
    const chunk = joined(pending);
    pending = [];
    return chunk;
  };
  /** The flush waiting for the end of this turn (immediate) or for the coalescing bound (timeout). */
  let immediate: NodeJS.Immediate | undefined;
  let timeout: NodeJS.Timeout | undefined;
  let lastWrite = -Infinity;
  /** Set while the client's buffer is full: resolves on drain, or on close (the client gone, or cut off after `sendTimeoutMs`). */
  let blocked: Promise<void> | undefined;
  const flush = () => {
    immediate = timeout = undefined;
    lastWrite = performance.now();
    if (res.destroyed || !res.write(take())) blocked = drainedOrClosed(res, sendTimeoutMs).then(() => void (blocked = undefined));
  };
  const schedule = () => {
    if (immediate || timeout) return;
    const wait = lastWrite + coalesceMs - performance.now();
    if (wait > 0) timeout = setTimeout(flush, wait);
    else immediate = setImmediate(flush);
  };
  try {
    for await (const frame of frames) {
      if (signal.aborted || res.destroyed) return;
      const framed = format({ event: frame.event, data: redact(frame.data) });
      if (framed.length === 0) continue;
      pending.push(framed);
      schedule();
      if (blocked) await blocked;
    }
  } finally {
    if (immediate) clearImmediate(immediate);
    if (timeout) clearTimeout(timeout);
    if (!res.destroyed) res.end(pending.length && !signal.aborted ? take() : undefined);
  }
}

/** One write's worth: text joined, or bytes concatenated when a framing gives bytes. */
function joined(parts: Array<string | Uint8Array>): string | Uint8Array {
  return parts.every((p) => typeof p === 'string') ? parts.join('') : Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

/**
 * Resolves on `drain` or `close`, whichever comes first, and leaves no listener behind. A client
 * that has not drained after `timeoutMs` is cut off: its connection is destroyed, which is a
 * disconnect like any other (the run stops and bills what was produced).
 */
function drainedOrClosed(res: FrameSink, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const stalled = setTimeout(() => res.destroy(), timeoutMs);
    const done = () => {
      clearTimeout(stalled);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
