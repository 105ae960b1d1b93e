import { Redis } from 'ioredis';
import { bucketStatus, WINDOW_MS } from './gcra.js';
import type { KeyLimits, LimitDecision, LimitStore } from './types.js';

/**
 * gcra.ts's `take`, in one script so that reading and writing both buckets is atomic across
 * instances, on Redis's clock (instances' clocks may disagree). A limit of 0 is absent. Returns
 * allowed (0/1), the wait in ms, and each bucket's use in ms as text (Redis truncates numbers).
 */
const TAKE = `
local W = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local rpm, tpm, tokens = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local retry, reqUsed, tokUsed = 0, 0, 0
if rpm > 0 then
  reqUsed = math.max(tonumber(redis.call('GET', KEYS[1])) or now, now) - now
  if reqUsed + W / rpm > W + 1e-6 then retry = math.max(retry, reqUsed + W / rpm - W) end
end
if tpm > 0 then
  tokUsed = math.max(tonumber(redis.call('GET', KEYS[2])) or now, now) - now
  if tokUsed >= W then retry = math.max(retry, tokUsed - W + W / tpm) end
end
if retry > 0 then return {0, math.ceil(retry), tostring(reqUsed), tostring(tokUsed)} end
if rpm > 0 then
  reqUsed = reqUsed + W / rpm
  redis.call('SET', KEYS[1], tostring(now + reqUsed), 'PX', math.ceil(reqUsed) + 1000)
end
if tpm > 0 then
  tokUsed = tokUsed + tokens * W / tpm
  if tokUsed > 0 then redis.call('SET', KEYS[2], tostring(now + tokUsed), 'PX', math.ceil(tokUsed) + 1000) end
end
return {1, 0, tostring(reqUsed), tostring(tokUsed)}
`;

/** gcra.ts's `adjust`. */
const ADJUST = `
local W = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tat = math.max(tonumber(redis.call('GET', KEYS[1])) or now, now)
local used = math.max(now, tat + tonumber(ARGV[2]) * W / tonumber(ARGV[1])) - now
if used <= 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], tostring(now + used), 'PX', math.ceil(used) + 1000)
end
return 1
`;

type Scripted = Redis & {
  switchyardTake(reqKey: string, tokKey: string, rpm: number, tpm: number, tokens: number, window: number): Promise<[number, number, string, string]>;
  switchyardAdjust(tokKey: string, tpm: number, tokens: number, window: number): Promise<number>;
};

/** The buckets in Redis, shared by every instance that points at it. */
export class RedisLimitStore implements LimitStore {
  private constructor(
    private readonly redis: Scripted,
    private readonly prefix: string,
  ) {}

  /**
   * Connects before the gateway starts serving, so a wrong `REDIS_URL` stops the start instead of
   * quietly turning the limits off. Commands fail fast afterwards (no offline queue, a timeout):
   * the caller decides what an unreachable Redis means.
   */
  static async connect(url: string, prefix = 'switchyard:rl:'): Promise<RedisLimitStore> {
    const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 250 });
    // Reconnection errors are reported through the commands that fail; unhandled, they would crash.
    redis.on('error', () => undefined);
    try {
      await redis.connect();
    } catch (e) {
      redis.disconnect();
      throw new Error(`cannot reach Redis at ${url}: ${(e as Error).message}`, { cause: e });
    }
    redis.defineCommand('switchyardTake', { numberOfKeys: 2, lua: TAKE });
    redis.defineCommand('switchyardAdjust', { numberOfKeys: 1, lua: ADJUST });
    return new RedisLimitStore(redis as Scripted, prefix);
  }

  async take(keyId: string, limits: KeyLimits, tokens: number): Promise<LimitDecision> {
    const rpm = limits.requestsPerMinute;
    const tpm = limits.tokensPerMinute;
    const [allowed, retryAfterMs, reqUsed, tokUsed] = await this.redis.switchyardTake(
      this.key(keyId, 'r'),
      this.key(keyId, 't'),
      rpm ?? 0,
      tpm ?? 0,
      tokens,
      WINDOW_MS,
    );
    return {
      allowed: allowed === 1,
      retryAfterMs,
      requests: rpm === undefined ? undefined : bucketStatus(rpm, Number(reqUsed)),
      tokens: tpm === undefined ? undefined : bucketStatus(tpm, Number(tokUsed)),
    };
  }

  async adjust(keyId: string, limits: KeyLimits, tokens: number): Promise<void> {
    if (limits.tokensPerMinute === undefined || tokens === 0) return;
    await this.redis.switchyardAdjust(this.key(keyId, 't'), limits.tokensPerMinute, tokens, WINDOW_MS);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private key(keyId: string, bucket: 'r' | 't'): string {
    return `${this.prefix}${keyId}:${bucket}`;
  }
}
