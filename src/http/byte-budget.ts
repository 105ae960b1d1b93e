/**
 * A bound on the bytes of request bodies being read at once. Each body reserves what it may
 * occupy (its content-length, or the body limit when the length is unknown) before a byte is
 * read, and gives it back once parsed. Reservations wait in arrival order; one that cannot start
 * within `waitMs` is refused, so many large bodies arriving together queue or get a 503 instead
 * of exhausting memory.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: Array<{ bytes: number; grant: () => void }> = [];

  constructor(readonly capacity: number) {}

  /** Resolves to the release function, or undefined when the bytes did not free up in time. */
  async reserve(bytes: number, waitMs: number): Promise<(() => void) | undefined> {
    // A body larger than the whole budget would never start: it runs alone instead.
    const n = Math.min(Math.max(0, bytes), this.capacity);
    if (this.waiting.length === 0 && this.used + n <= this.capacity) return this.take(n);
    return new Promise((resolve) => {
      const entry = {
        bytes: n,
        grant: () => {
          clearTimeout(timer);
          resolve(this.take(n));
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(entry), 1);
        resolve(undefined);
        this.grantWaiting();
      }, waitMs);
      this.waiting.push(entry);
    });
  }

  private take(n: number): () => void {
    this.used += n;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= n;
      this.grantWaiting();
    };
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0].bytes <= this.capacity) this.waiting.shift()!.grant();
  }
}
