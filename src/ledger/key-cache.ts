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
 * authenticate. Only hits are cached (an unknown key always reaches the database). A hold placed
 * in the database re-checks in its own statement that the key still exists and is not revoked; a
 * hold served from a balance lease (leases.ts) takes the cache's word, which is why a key is
 * evicted at once, on every instance, when it is revoked or changed: through this process
 * directly, and from other processes by the ledger's announcements (statements.ts `announce`),
 * without which no lease is served. Looked up by key id too (`byKeyId`), for the lease's check.
 */
export class KeyCache {
  private entries = new Map<string, Entry>();
  private byId = new Map<string, Entry>();
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
      if (e.auth.keyId && this.byId.get(e.auth.keyId) === e) this.byId.delete(e.auth.keyId);
      return undefined;
    }
    return e.auth;
  }

  /** The verified key with this id, while the cache may answer for it. */
  byKeyId(keyId: string): KeyAuth | undefined {
    const e = this.byId.get(keyId);
    if (!e || e.expiresAt <= this.now()) return undefined;
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
    if (this.entries.size >= this.opts.maxEntries) {
      const [oldest, e] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      if (e.auth.keyId && this.byId.get(e.auth.keyId) === e) this.byId.delete(e.auth.keyId);
    }
    const entry = { auth, expiresAt: this.now() + this.opts.ttlMs };
    this.entries.set(hash, entry);
    if (auth.keyId) this.byId.set(auth.keyId, entry);
  }

  /** Forgets a key (revoked or changed, or refused by a hold). */
  evictKeyId(keyId: string): void {
    this.evictions++;
    this.byId.delete(keyId);
    for (const [hash, e] of this.entries) if (e.auth.keyId === keyId) this.entries.delete(hash);
  }

  /** Forgets every key (announcements may have been missed). */
  clear(): void {
    this.evictions++;
    this.entries.clear();
    this.byId.clear();
  }
}
