/**
 * Two instances sharing one Redis (TEST_REDIS_URL): a cooldown one starts is skipped by the other
 * at once, a later instance reads the cooldowns running, and a probe's success clears them.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy } from '../../../test/support/tcp-proxy.js';
import { RedisDeploymentHealth } from './redis-health.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? (process.env.CI ? 'redis://127.0.0.1:6379' : undefined);
const log = { warn: () => undefined };
const D = 'claude/primary';

const open: RedisDeploymentHealth[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** An instance on its own prefix shared with `prefix`'s other instances. */
async function instance(prefix: string, now: () => number = Date.now) {
  const s = await RedisDeploymentHealth.connect(REDIS_URL!, { log, prefix, now });
  open.push(s);
  return s;
}

/** Until `check` holds (the other instance's message is on its way): the ms it took. */
async function until(check: () => boolean, withinMs = 2_000): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
  return performance.now() - start;
}

describe.skipIf(!REDIS_URL)('deployment health shared through Redis', () => {
  it('instance B skips what A cooled down, as soon as the announcement arrives', async () => {
    const prefix = `switchyard:test:${randomBytes(6).toString('hex')}:`;
    const a = await instance(prefix);
    const b = await instance(prefix);
    expect(b.available(D, Date.now())).toBe(true);
    a.recordFailure(D, { status: 529, retryAfterMs: 8_000 }, Date.now());
    expect(a.available(D, Date.now())).toBe(false);
    const waited = await until(() => !b.available(D, Date.now()));
    expect(waited).toBeLessThan(500);
    const seen = b.snapshot(Date.now()).find((d) => d.id === D)!;
    expect(seen.state).toBe('cooling_down');
    expect(seen.cooldownUntil! - Date.now()).toBeGreaterThan(7_000);
    expect(seen.cooldownUntil! - Date.now()).toBeLessThanOrEqual(8_000);
    // Each instance keeps its own failure counts: B has seen no call.
    expect(seen.errorRate).toBe(0);
  });

  it('an instance that starts later reads the cooldowns running; a probe that succeeds clears them everywhere', async () => {
    const prefix = `switchyard:test:${randomBytes(6).toString('hex')}:`;
    const clock = { t: Date.now() };
    const a = await instance(prefix, () => clock.t);
    a.recordFailure(D, { status: 429, retryAfterMs: 6_000 }, clock.t);
    a.recordFailure('gpt/one', { status: 503, retryAfterMs: 9_000 }, clock.t);
    const c = await instance(prefix);
    // Read at start, before any message: no waiting.
    expect(c.available(D, Date.now())).toBe(false);
    expect(c.available('gpt/one', Date.now())).toBe(false);
    const inRedis = new Redis(REDIS_URL!);
    try {
      expect(Number(await inRedis.pttl(`${prefix}cooldown:${D}`))).toBeGreaterThan(5_000);
      // A's cooldown ends (its clock moves on), its probe succeeds: the key goes and C hears of it.
      clock.t += 6_000;
      const end = a.begin(D);
      a.recordSuccess(D, 40, clock.t);
      end();
      await until(() => c.available(D, Date.now()));
      expect(await inRedis.exists(`${prefix}cooldown:${D}`)).toBe(0);
      expect(c.available('gpt/one', Date.now())).toBe(false);
    } finally {
      inRedis.disconnect();
    }
  });

  it('Redis going away: each instance goes on with its own state and logs once; back, it writes its cooldowns for the others', async () => {
    const prefix = `switchyard:test:${randomBytes(6).toString('hex')}:`;
    const target = new URL(REDIS_URL!);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    try {
      const warnings: string[] = [];
      const via = new URL(REDIS_URL!);
      via.hostname = '127.0.0.1';
      via.port = String(proxy.port);
      const a = await RedisDeploymentHealth.connect(via.toString(), { log: { warn: (_o, msg) => void warnings.push(msg ?? '') }, prefix });
      open.push(a);
      const b = await instance(prefix);
      proxy.setMode('refuse');
      await until(() => !a.connected());
      a.recordFailure(D, { status: 529, retryAfterMs: 10_000 }, Date.now());
      a.recordFailure('gpt/one', { status: 529, retryAfterMs: 10_000 }, Date.now());
      expect(a.available(D, Date.now())).toBe(false);
      await until(() => warnings.length > 0);
      expect(warnings).toHaveLength(1);
      expect(b.available(D, Date.now())).toBe(true);
      proxy.setMode('pass');
      // ioredis reconnects on its own schedule; then A announces what it started meanwhile.
      await until(() => !b.available(D, Date.now()), 10_000);
      expect(b.available('gpt/one', Date.now())).toBe(false);
    } finally {
      await proxy.close();
    }
  }, 20_000);

  it('instances on other prefixes are not affected', async () => {
    const a = await instance(`switchyard:test:${randomBytes(6).toString('hex')}:`);
    const b = await instance(`switchyard:test:${randomBytes(6).toString('hex')}:`);
    a.recordFailure(D, { status: 529, retryAfterMs: 5_000 }, Date.now());
    await new Promise((r) => setTimeout(r, 100));
    expect(b.available(D, Date.now())).toBe(true);
  });
});

// Registered only without Redis, so a run with Redis (CI) has nothing skipped.
if (!REDIS_URL) {
  describe('deployment health shared through Redis', () => {
    it.skip('needs TEST_REDIS_URL (e.g. redis://127.0.0.1:6379): the two-instance tests are skipped', () => undefined);
  });
}
