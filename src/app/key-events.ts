import { closeRedis, connectRedis } from '../limits/redis-store.js';

const CHANNEL = 'switchyard:key-changed';

/**
 * Tells every gateway instance that a key was revoked or its limits changed, so each drops it from
 * its key cache at once instead of within the cache's minute. Through Redis pub/sub when Redis is
 * configured; a single instance needs nothing (its ledger evicts on its own changes).
 */
export interface KeyEvents {
  changed(keyId: string): void;
  close(): Promise<void>;
}

export const localKeyEvents: KeyEvents = { changed: () => undefined, close: async () => undefined };

export async function redisKeyEvents(url: string, onChanged: (keyId: string) => void, onError: (err: unknown) => void): Promise<KeyEvents> {
  // A subscribed connection can do nothing else, so publishing takes a second one. Publishing is
  // not queued while disconnected: an announcement then is lost, and the cache's minute applies.
  const options = { maxRetriesPerRequest: 1, commandTimeout: 5_000 };
  const sub = await connectRedis(url, options);
  const pub = await connectRedis(url, { ...options, enableOfflineQueue: false }).catch(async (e) => {
    await closeRedis(sub);
    throw e;
  });
  await sub.subscribe(CHANNEL);
  sub.on('message', (channel: string, keyId: string) => {
    if (channel === CHANNEL) onChanged(keyId);
  });
  return {
    changed: (keyId) => void pub.publish(CHANNEL, keyId).catch(onError),
    async close() {
      await Promise.all([closeRedis(sub), closeRedis(pub)]);
    },
  };
}
