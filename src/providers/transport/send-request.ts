import { errors, util, type Dispatcher } from 'undici';

/** What `sendRequest` answers once the upstream's headers arrived. */
export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

export interface SendOptions {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  /** Aborting it before the headers rejects the call; after them, the body is destroyed. */
  signal: AbortSignal;
  /** Overrides the dispatcher's wait for the response headers. */
  headersTimeout?: number;
}

/** Chunks a body queues for a reader that has not caught up before the upstream is paused. */
const QUEUED_CHUNKS = 16;

/**
 * One HTTP request through an undici dispatcher, with the body handed over as it arrives: the
 * same connection pool, timeouts and errors as undici's `request()`, without the stream.Readable
 * and async-resource machinery around each response (per call, a Readable, its async iterator's
 * promises per chunk, and an AsyncResource scope around the callback). A body is read once,
 * whole (`text()`) or chunk by chunk (`for await`), with backpressure: the socket is paused while
 * QUEUED_CHUNKS chunks wait for the reader.
 */
export function sendRequest(dispatcher: Dispatcher, url: string, opts: SendOptions): Promise<UpstreamResponse> {
  const { origin, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    if (opts.signal.aborted) return reject(opts.signal.reason);
    const body = new UpstreamBody();
    let abort: ((reason?: Error) => void) | undefined;
    let answered = false;
    const onAbort = () => {
      if (answered) body.destroy();
      else abort?.(opts.signal.reason);
    };
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => opts.signal.removeEventListener('abort', onAbort);
    dispatcher.dispatch(
      {
        origin,
        path: pathname + search,
        method: opts.method,
        headers: opts.headers,
        body: opts.body,
        ...(opts.headersTimeout === undefined ? {} : { headersTimeout: opts.headersTimeout }),
      },
      {
        onConnect(abortRequest) {
          abort = abortRequest;
          body.abort = abortRequest;
          if (opts.signal.aborted) abortRequest(opts.signal.reason);
        },
        onHeaders(statusCode, rawHeaders, resume) {
          // 1xx answers (100 Continue) are not the response.
          if (statusCode < 200) return true;
          answered = true;
          body.resume = resume;
          resolve({ statusCode, headers: util.parseHeaders(rawHeaders as unknown as Buffer[]) as UpstreamResponse['headers'], body });
          return true;
        },
        onData(chunk) {
          return body.push(chunk);
        },
        onComplete() {
          done();
          body.end();
        },
        onError(err) {
          done();
          if (answered) body.fail(err);
          else reject(err);
        },
      },
    );
  });
}

/** A response body: read it once, whole or chunk by chunk; destroying it closes the connection unless it was read to its end. */
export class UpstreamBody implements AsyncIterable<Uint8Array> {
  /** Set by sendRequest: stops the request (and its connection). */
  abort?: (reason?: Error) => void;
  /** Set by sendRequest: lets a paused socket read again. */
  resume?: () => void;
  private chunks: Buffer[] = [];
  private ended = false;
  private error: Error | undefined;
  private paused = false;
  private wake: (() => void) | undefined;
  private gone = false;

  get destroyed(): boolean {
    return this.gone;
  }

  /** A chunk from the socket; false pauses it until the reader catches up. */
  push(chunk: Buffer): boolean {
    if (this.gone) return true;
    this.chunks.push(chunk);
    this.signal();
    this.paused = this.chunks.length >= QUEUED_CHUNKS;
    return !this.paused;
  }

  end(): void {
    this.ended = true;
    this.signal();
  }

  fail(err: Error): void {
    this.error ??= err;
    this.signal();
  }

  /** Stops reading: a body not read to its end closes its connection, as undici's does when destroyed. */
  destroy(): void {
    if (this.gone) return;
    this.gone = true;
    this.chunks = [];
    if (!this.ended) {
      const reason = new errors.RequestAbortedError();
      this.fail(reason);
      this.abort?.(reason);
    }
  }

  /** The whole body as UTF-8 text. */
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    for await (const chunk of this) parts.push(chunk);
    return parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8');
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for (;;) {
      // As a destroyed stream does: what is still queued is dropped.
      if (this.error) throw this.error;
      if (this.chunks.length > 0) {
        const chunk = this.chunks.shift()!;
        if (this.paused && this.chunks.length < QUEUED_CHUNKS / 2) {
          this.paused = false;
          this.resume?.();
        }
        yield chunk;
        continue;
      }
      if (this.ended || this.gone) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
