/**
 * The server's requests in flight and its stopping, for a graceful drain: the app counts each
 * request while it runs (a stream until its last byte), readiness turns false once draining
 * starts, and `endInFlight` ends what is still running the way an upstream failure would (the
 * pipeline receives the reason through its signal and the client gets it in its protocol).
 */
export class Lifecycle {
  /** True from the start of a drain: new requests are refused and readiness is false. */
  draining = false;
  private readonly stop = new AbortController();
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  /** One listener on the shutdown signal for all of them: one each would pass Node's limit of 10. */
  private readonly onShutdown = new Set<(reason: unknown) => void>();

  constructor() {
    this.stop.signal.addEventListener('abort', () => {
      for (const listener of [...this.onShutdown]) listener(this.stop.signal.reason);
      this.onShutdown.clear();
    }, { once: true });
  }

  /** Aborted, with the reason, when the requests still running must end. */
  get shutdown(): AbortSignal {
    return this.stop.signal;
  }

  /**
   * Calls `listener` with the reason when the requests still running must end (at once when they
   * already must). Returns the way to stop listening: a request calls it when it ends.
   */
  whenShutdown(listener: (reason: unknown) => void): () => void {
    if (this.stop.signal.aborted) {
      listener(this.stop.signal.reason);
      return () => undefined;
    }
    this.onShutdown.add(listener);
    return () => this.onShutdown.delete(listener);
  }

  get inFlight(): number {
    return this.active;
  }

  enter(): void {
    this.active++;
  }

  leave(): void {
    this.active--;
    if (this.active === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Resolves true once no request is running, or false after `timeoutMs` with some still running. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.active === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.push(wake);
    });
  }

  endInFlight(reason: Error): void {
    this.stop.abort(reason);
  }
}
