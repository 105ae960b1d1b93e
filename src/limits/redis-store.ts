import { Redis, type RedisOptions } from 'ioredis';
import { decision, WINDOW_MS } from './bucket.js';
import type { Correction, KeyLimits, LimitDecision, LimitStore } from './types.js';

/**
 * Lua shared by both scripts: Redis's clock in ms, a bucket's units in use now, and the key's
 * expiry once both buckets have drained. A key's two buckets are fields of one hash (`ru`/`ra`/`rl`:
 * requests used, at, under limit; `tu`/`ta`/`tl`: tokens), so each script touches one key. Numbers
 * are written with 17 significant digits: Lua's `tostring` keeps 14, which loses units at large limits.
 */
const COMMON = `
local W = tonumber(ARGV[1])
local rpm, tpm = tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('HMGET', KEYS[1], 'ru', 'ra', 'rl', 'tu', 'ta', 'tl')
local function used(u, a, was, limit)
  if limit <= 0 or not u then return 0 end
  was = tonumber(was) or limit
  local x = math.max(0, tonumber(u) - (now - tonumber(a)) * was / W)
  if limit < was then x = x * limit / was end
  return x
end
local function num(x) return string.format('%.17g', x) end
local ru, tu = used(v[1], v[2], v[3], rpm), used(v[4], v[5], v[6], tpm)
local function save()
  local ttl = 0
  if rpm > 0 then redis.call('HSET', KEYS[1], 'ru', num(ru), 'ra', num(now), 'rl', num(rpm)); ttl = math.max(ttl, ru * W / rpm) end
  if tpm > 0 then redis.call('HSET', KEYS[1], 'tu', num(tu), 'ta', num(now), 'tl', num(tpm)); ttl = math.max(ttl, tu * W / tpm) end
  redis.call('PEXPIRE', KEYS[1], math.ceil(ttl) + 1000)
end
`;

/**
 * bucket.ts's `take`, atomic across instances and on Redis's clock (instances' clocks may
 * disagree). A limit of 0 is absent. Returns allowed (0/1), the wait in ms, too large (0/1) and
 * each bucket's units in use, as text (Redis truncates numbers).
 */
const TAKE = `${COMMON}
local tokens = tonumber(ARGV[4])
local wait, large = 0, 0
if rpm > 0 and ru + 1 > rpm + 1e-9 then wait = math.max(wait, (ru + 1 - rpm) * W / rpm) end
if tpm > 0 then
  if tokens > tpm then large = 1
  elseif tu + tokens > tpm + 1e-9 then wait = math.max(wait, (tu + tokens - tpm) * W / tpm) end
end
if wait > 0 or large == 1 then return {0, math.ceil(wait), large, num(ru), num(tu)} end
if rpm > 0 then ru = ru + 1 end
if tpm > 0 then tu = tu + tokens end
save()
return {1, 0, 0, num(ru), num(tu)}
`;

/** bucket.ts's `adjust` for both buckets. */
const ADJUST = `${COMMON}
if rpm > 0 then ru = math.max(0, ru + tonumber(ARGV[4])) end
if tpm > 0 then tu = math.max(0, tu + tonumber(ARGV[5])) end
save()
return 1
`;

type Scripted = Redis & {
  switchyardTake(key: string, window: number, rpm: number, tpm: number, tokens: number): Promise<[number, number, number, string, string]>;
  switchyardAdjust(key: string, window: number, rpm: number, tpm: number, requests: number, tokens: number): Promise<number>;
};

/**
 * Long enough that a busy gateway, whose event loop reads Redis's answer late, never mistakes
 * that for Redis being down (which would admit requests unchecked); a Redis that is down is
 * noticed by the connection's state at once, not by this timeout.
 */
const COMMAND_TIMEOUT_MS = 5_000;

/** The buckets in Redis, shared by every instance that points at it. */
export class RedisLimitStore implements LimitStore {
  private constructor(
    private readonly redis: Scripted,
    private readonly prefix: string,
  ) {}

  /**
   * Connects before the gateway starts serving, so a wrong `REDIS_URL` stops the start instead of
   * quietly turning the limits off. Commands are not queued while the connection is down: they
   * fail at once, and the caller decides what an unreachable Redis means.
   */
  static async connect(url: string, prefix = 'switchyard:rl:'): Promise<RedisLimitStore> {
    const redis = await connectRedis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS });
    redis.defineCommand('switchyardTake', { numberOfKeys: 1, lua: TAKE });
    redis.defineCommand('switchyardAdjust', { numberOfKeys: 1, lua: ADJUST });
    return new RedisLimitStore(redis as Scripted, prefix);
  }

  async take(keyId: string, limits: KeyLimits, tokens: number): Promise<LimitDecision> {
    const [allowed, waitMs, tooLarge, reqUsed, tokUsed] = await this.redis.switchyardTake(
      this.key(keyId),
      WINDOW_MS,
      limits.requestsPerMinute ?? 0,
      limits.tokensPerMinute ?? 0,
      tokens,
    );
    return decision(allowed === 1, waitMs, tooLarge === 1, limits, Number(reqUsed), Number(tokUsed));
  }

  async adjust(keyId: string, limits: KeyLimits, by: Correction): Promise<void> {
    await this.redis.switchyardAdjust(this.key(keyId), WINDOW_MS, limits.requestsPerMinute ?? 0, limits.tokensPerMinute ?? 0, by.requests ?? 0, by.tokens ?? 0);
  }

  /** False while the connection is down: a check would fail at once, so none is tried. */
  available(): boolean {
    return this.redis.status === 'ready';
  }

  async close(): Promise<void> {
    await closeRedis(this.redis);
  }

  private key(keyId: string): string {
    return `${this.prefix}${keyId}`;
  }
}

/**
 * A connected client, or an error that names REDIS_URL and the cause (refused, unknown host,
 * wrong password) without the URL's password.
 */
export async function connectRedis(url: string, options: RedisOptions): Promise<Redis> {
  let redis: Redis;
  try {
    redis = new Redis(url, { lazyConnect: true, ...options });
  } catch (e) {
    throw new Error(redact(`REDIS_URL ${url} is not a Redis URL: ${(e as Error).message}`, url));
  }
  let cause: Error | undefined;
  // Reconnection errors are reported through the commands that fail; unhandled, they would crash.
  redis.on('error', (e: Error) => void (cause ??= e));
  try {
    await redis.connect();
    return redis;
  } catch (e) {
    redis.disconnect();
    // The cause is left out of the chain: its message may quote the URL, password included.
    throw new Error(redact(`cannot reach Redis at ${url} (REDIS_URL): ${(cause ?? (e as Error)).message}`, url));
  }
}

/** Closes politely when Redis answers, at once when it does not (a hung Redis must not hang a shutdown). */
export async function closeRedis(redis: Redis): Promise<void> {
  const quit = redis.quit().catch(() => undefined);
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 1000).unref());
  await Promise.race([quit, timeout]);
  redis.disconnect();
}

/** The URL's credentials (everything between `//` and the host's `@`), masked wherever they appear in `text`. */
function redact(text: string, url: string): string {
  const credentials = /^[^/]*\/\/(.*)@[^@/]*/.exec(url)?.[1];
  return credentials ? text.split(credentials).join('***') : text;
}
