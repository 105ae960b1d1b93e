import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { MemoryLimitStore, RedisLimitStore, type LimitStore } from '../../src/limits/index.js';

/**
 * Redis for the tests that need one: when TEST_REDIS_URL (or REDIS_URL) is set. On CI it is
 * mandatory, as PostgreSQL is (see db-targets.ts): it falls back to the local server's URL, so a
 * missing Redis fails the run instead of leaving the shared-limit tests out.
 */
export const REDIS_URL: string | undefined =
  process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? (process.env.CI ? 'redis://127.0.0.1:6379' : undefined);

export interface StoreTarget {
  name: 'memory' | 'redis';
  /** A store of its own: a fresh key prefix on Redis. `now` is honoured by the memory store only. */
  open(now?: () => number): Promise<LimitStore>;
}

export const storeTargets: StoreTarget[] = [
  { name: 'memory', open: async (now) => new MemoryLimitStore(now) },
  ...(REDIS_URL ? [{ name: 'redis' as const, open: () => RedisLimitStore.connect(REDIS_URL!, uniquePrefix()) }] : []),
];

/** A prefix no other test run uses, for gateways that share one Redis in a test. */
export function uniquePrefix(): string {
  return `switchyard:test:${randomBytes(6).toString('hex')}:`;
}

/** Deletes what a test left under `prefix` (its keys expire anyway, within a minute or so). */
export async function dropPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
