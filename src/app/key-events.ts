import { Redis } from 'ioredis';

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
  // A subscribed connection can do nothing else, so publishing takes a second one.
  const options = { lazyConnect: true, maxRetriesPerRequest: 1 };
  const sub = new Redis(url, options);
  const pub = new Redis(url, options);
  for (const r of [sub, pub]) r.on('error', () => undefined);
  try {
    await Promise.all([sub.connect(), pub.connect()]);
    await sub.subscribe(CHANNEL);
  } catch (e) {
    sub.disconnect();
    pub.disconnect();
    throw new Error(`cannot reach Redis at ${url}: ${(e as Error).message}`, { cause: e });
  }
  sub.on('message', (channel: string, keyId: string) => {
    if (channel === CHANNEL) onChanged(keyId);
  });
  return {
    changed: (keyId) => void pub.publish(CHANNEL, keyId).catch(onError),
    async close() {
      await Promise.all([sub.quit().catch(() => sub.disconnect()), pub.quit().catch(() => pub.disconnect())]);
    },
  };
}
