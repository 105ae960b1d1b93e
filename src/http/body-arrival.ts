import { GatewayError } from '../ir/index.js';

/** How fast a request body must arrive (SWITCHYARD_BODY_MIN_BYTES_PER_S, SWITCHYARD_BODY_TIMEOUT_MS). */
export interface BodyArrival {
  /** After the first `graceMs`, a body whose average rate falls below this is cut. */
  minBytesPerSecond: number;
  /** A body not whole by then is cut, however fast it came. */
  timeoutMs: number;
  graceMs: number;
}

/**
 * 8 KiB/s after a 10 s grace (a 32 MiB body at that rate takes 68 minutes: only a stalled or
 * trickling sender is cut), and 5 minutes in all, as Node's own `requestTimeout` (300 s) counts a
 * whole request. nginx's `client_body_timeout` (60 s between two reads) is the same idea.
 */
export const DEFAULT_BODY_ARRIVAL: BodyArrival = { minBytesPerSecond: 8 * 1024, timeoutMs: 300_000, graceMs: 10_000 };

/** Bytes a socket has read so far (headers included: only differences are used). */
interface Readable {
  readonly bytesRead: number;
}

/**
 * Runs `read` (the body being read) and cuts it with a 408 when the body arrives slower than the
 * minimum rate after the grace, or is not whole by the deadline: a sender that trickles its body
 * (one byte a second) holds its share of the body budget and its socket only that long. Checked
 * once a second from what the socket has read, so a fast body costs one timer.
 */
export async function withinArrival<T>(socket: Readable, limits: BodyArrival, read: Promise<T>): Promise<T> {
  const started = Date.now();
  const from = socket.bytesRead;
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      const elapsedMs = Date.now() - started;
      const rate = ((socket.bytesRead - from) * 1000) / elapsedMs;
      if (elapsedMs >= limits.timeoutMs) reject(slow(`the request body did not arrive within ${Math.round(limits.timeoutMs / 1000)} s`));
      else if (elapsedMs >= limits.graceMs && rate < limits.minBytesPerSecond) {
        reject(slow(`the request body arrived at ${Math.floor(rate)} bytes/s, below the minimum of ${limits.minBytesPerSecond}`));
      }
    }, Math.min(1000, limits.graceMs, limits.timeoutMs));
  });
  try {
    return await Promise.race([read, cut]);
  } finally {
    clearInterval(timer);
  }
}

function slow(message: string): GatewayError {
  return new GatewayError('request_timeout', `${message}; send it faster or retry`);
}
