/**
 * A bound on the bytes of request bodies being read at once, shared fairly. Each body reserves
 * what it may occupy (its content-length, or the body limit when the length is unknown) before a
 * byte is read, and gives it back once parsed. An owner (a key, or an unauthenticated connection)
 * may hold at most `share` of the budget, except for its first body, which may take up to the whole
 * budget (a body larger than a share must be able to run). Reservations wait in arrival order per
 * owner; one that cannot start within `waitMs` is refused. So many large bodies arriving together
 * queue or get a 503 instead of exhausting memory, and one owner's slow bodies never make another
 * owner wait.
 */
export class ByteBudget {
  private used = 0;
  private readonly byOwner = new Map<string, number>();
  private readonly waiting: Array<{ bytes: number; owner: string; grant: () => void }> = [];

  constructor(
    readonly capacity: number,
    /** Most one owner holds beyond its first body (default: a quarter of the capacity). */
    readonly share = Math.floor(capacity / 4),
  ) {}

  /** Resolves to the release function, or undefined when the bytes did not free up in time. */
  async reserve(bytes: number, waitMs: number, owner = ''): Promise<(() => void) | undefined> {
    // A body larger than the whole budget would never start: it runs alone instead.
    const n = Math.min(Math.max(0, bytes), this.capacity);
    if (!this.waiting.some((w) => w.owner === owner) && this.fits(n, owner)) return this.take(n, owner);
    return new Promise((resolve) => {
      const entry = {
        bytes: n,
        owner,
        grant: () => {
          clearTimeout(timer);
          resolve(this.take(n, owner));
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

  private fits(n: number, owner: string): boolean {
    const own = this.byOwner.get(owner) ?? 0;
    return this.used + n <= this.capacity && (own === 0 || own + n <= this.share);
  }

  private take(n: number, owner: string): () => void {
    this.used += n;
    this.byOwner.set(owner, (this.byOwner.get(owner) ?? 0) + n);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= n;
      const left = (this.byOwner.get(owner) ?? 0) - n;
      if (left > 0) this.byOwner.set(owner, left);
      else this.byOwner.delete(owner);
      this.grantWaiting();
    };
  }

  /** Grants, in arrival order, each waiting body that fits and has no earlier body of its owner still waiting. */
  private grantWaiting(): void {
    const blocked = new Set<string>();
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i];
      if (!blocked.has(w.owner) && this.fits(w.bytes, w.owner)) {
        this.waiting.splice(i, 1);
        w.grant();
        continue;
      }
      blocked.add(w.owner);
      i++;
    }
  }
}
