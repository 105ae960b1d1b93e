import type { KeyAuth } from './types.js';

/** A verified key and until when the cache may answer for it without the database. */
interface Entry {
  auth: KeyAuth;
  expiresAt: number;
}

export interface KeyCacheOptions {
  /** How long a verified key is answered from memory. */
  ttlMs: number;
  /** Most keys remembered; the oldest is forgotten first. */
  maxEntries: number;
}

/**
 * Verified API keys, by key hash, so a completion does not pay a database round trip to
 * authenticate. Only hits are cached (an unknown key always reaches the database). Safe because
 * money never moves on the cache's word: every hold re-checks in its own statement that the key
 * still exists and is not revoked. A revoked key therefore stops spending at once on every
 * instance; what the cache can still answer, for at most `ttlMs`, is the free operations (listing
 * models, counting tokens). Revoking through this process evicts the key here immediately.
 */
export class KeyCache {
  private entries = new Map<string, Entry>();
  /** Counts evictions, so a lookup that raced one does not cache what it read before it. */
  private evictions = 0;

  constructor(
    private readonly opts: KeyCacheOptions,
    private readonly now: () => number = Date.now,
  ) {}

  get(hash: string): KeyAuth | undefined {
    const e = this.entries.get(hash);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return e.auth;
  }

  /** A token for `set`: the key read after it is cached only if nothing was evicted meanwhile. */
  version(): number {
    return this.evictions;
  }

  set(hash: string, auth: KeyAuth, readAtVersion: number): void {
    // A revocation or change landed while this was read from the database: the read may predate it.
    if (readAtVersion !== this.evictions) return;
    this.entries.delete(hash);
    if (this.entries.size >= this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { auth, expiresAt: this.now() + this.opts.ttlMs });
  }

  /** Forgets a key (revoked or changed, or refused by a hold). */
  evictKeyId(keyId: string): void {
    this.evictions++;
    for (const [hash, e] of this.entries) if (e.auth.keyId === keyId) this.entries.delete(hash);
  }
}
