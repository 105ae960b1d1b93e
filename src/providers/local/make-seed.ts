/**
 * Deterministic randomness for the local models: the same conversation always gives the same
 * answer, so tests (and clients retrying) see identical streams. No Math.random, no clock.
 */
import { createHash } from 'node:crypto';

/** FNV-1a, 32 bit: a cheap, stable seed from any text. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a tiny seeded generator returning floats in [0, 1). */
export function makeRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks one element with the generator. */
export function pick<T>(rng: () => number, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)] as T;
}

/** The items in an order the generator decides (Fisher-Yates): each appears once. */
export function shuffled<T>(rng: () => number, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** A stable id such as `toolu_local_3f2a...`, derived from the parts (e.g. the request id). */
export function deriveId(prefix: string, ...parts: Array<string | number>): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  return prefix + digest.slice(0, 24);
}
