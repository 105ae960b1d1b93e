import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../../limits/redis-store.js';
import { LocalDeploymentHealth, type Cooldown, type LocalHealthOptions } from './local-health.js';
import type { DeploymentFailure, DeploymentHealth, DeploymentState } from './types.js';

interface WarnLog {
  warn(obj: object, msg?: string): void;
}

/** What instances tell each other on the channel. */
type Announcement = { from: string; id: string } & ({ op: 'cool'; remainingMs: number; durationMs: number } | { op: 'recovered' });

/** At most one "Redis unreachable" warning per this many ms. */
const WARN_EVERY_MS = 10_000;

/**
 * Deployment health shared through Redis. Each instance keeps every deployment's state in memory
 * (reads stay synchronous and free of I/O); a cooldown one instance starts is published on a
 * channel, applied by every other instance as it arrives, and written as a key that expires with
 * the cooldown, so an instance that starts (or reconnects) later reads the cooldowns running. A
 * probe that succeeds is announced and deletes the key. Failure counts and latencies stay per
 * instance. When Redis is unreachable the instance goes on with its own state and logs it.
 */
export class RedisDeploymentHealth implements DeploymentHealth {
  private readonly instance = randomUUID();
  private lastWarning = -Infinity;

  private constructor(
    private readonly local: LocalDeploymentHealth,
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly prefix: string,
    private readonly log: WarnLog,
    private readonly now: () => number,
  ) {}

  /**
   * Connects (a wrong REDIS_URL stops the start, as the rate limits' store does), subscribes, and
   * reads the cooldowns other instances started before serving.
   */
  static async connect(url: string, opts: LocalHealthOptions & { log: WarnLog; prefix?: string }): Promise<RedisDeploymentHealth> {
    const prefix = opts.prefix ?? 'switchyard:';
    const options = { maxRetriesPerRequest: 1, commandTimeout: 5_000 };
    const sub = await connectRedis(url, options);
    const pub = await connectRedis(url, { ...options, enableOfflineQueue: false }).catch(async (e) => {
      await closeRedis(sub);
      throw e;
    });
    let store: RedisDeploymentHealth | undefined;
    const local = new LocalDeploymentHealth({
      ...opts,
      onCooldown: (id, c) => store?.announceCooldown(id, c),
      onRecovered: (id) => store?.announceRecovery(id),
    });
    store = new RedisDeploymentHealth(local, pub, sub, prefix, opts.log, opts.now ?? Date.now);
    try {
      await sub.subscribe(store.channel);
      sub.on('message', (channel: string, message: string) => {
        if (channel === store!.channel) store!.receive(message);
      });
      await store.load();
    } catch (e) {
      await store.close();
      throw e;
    }
    // After an outage: read what others started meanwhile, and write back what this one started.
    pub.on('ready', () => void store!.resync());
    return store;
  }

  available(deploymentId: string, nowMs: number): boolean {
    return this.local.available(deploymentId, nowMs);
  }

  begin(deploymentId: string): () => void {
    return this.local.begin(deploymentId);
  }

  inFlight(deploymentId: string): number {
    return this.local.inFlight(deploymentId);
  }

  latencyMs(deploymentId: string): number | undefined {
    return this.local.latencyMs(deploymentId);
  }

  recordSuccess(deploymentId: string, latencyMs: number, nowMs: number): void {
    this.local.recordSuccess(deploymentId, latencyMs, nowMs);
  }

  recordFailure(deploymentId: string, failure: DeploymentFailure, nowMs: number): void {
    this.local.recordFailure(deploymentId, failure, nowMs);
  }

  snapshot(nowMs: number): DeploymentState[] {
    return this.local.snapshot(nowMs);
  }

  /** False while the publishing connection is down (cooldowns are then this instance's own). */
  connected(): boolean {
    return this.pub.status === 'ready';
  }

  async close(): Promise<void> {
    await this.local.close();
    await Promise.all([closeRedis(this.sub), closeRedis(this.pub)]);
  }

  private get channel(): string {
    return `${this.prefix}deployment-health`;
  }

  private key(deploymentId: string): string {
    return `${this.prefix}cooldown:${deploymentId}`;
  }

  private announceCooldown(id: string, c: Cooldown): void {
    const message: Announcement = { from: this.instance, id, op: 'cool', ...c };
    this.pub
      .multi()
      .set(this.key(id), JSON.stringify({ durationMs: c.durationMs }), 'PX', Math.max(1, Math.ceil(c.remainingMs)))
      .publish(this.channel, JSON.stringify(message))
      .exec()
      .catch((e) => this.failed(e));
  }

  private announceRecovery(id: string): void {
    const message: Announcement = { from: this.instance, id, op: 'recovered' };
    this.pub
      .multi()
      .del(this.key(id))
      .publish(this.channel, JSON.stringify(message))
      .exec()
      .catch((e) => this.failed(e));
  }

  private receive(text: string): void {
    const m = parseJson(text) as Announcement | undefined;
    if (!m || m.from === this.instance || typeof m.id !== 'string') return;
    if (m.op === 'cool' && Number.isFinite(m.remainingMs) && Number.isFinite(m.durationMs)) this.local.applyCooldown(m.id, m);
    else if (m.op === 'recovered') this.local.applyRecovery(m.id);
  }

  /** Every cooldown key with the time it has left. */
  private async load(): Promise<void> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.pub.scan(cursor, 'MATCH', `${this.prefix}cooldown:*`, 'COUNT', 500);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    if (keys.length === 0) return;
    const batch = this.pub.pipeline();
    for (const k of keys) batch.get(k).pttl(k);
    const answers = (await batch.exec()) ?? [];
    keys.forEach((k, i) => {
      const value = answers[2 * i]?.[1];
      const pttl = Number(answers[2 * i + 1]?.[1]);
      if (typeof value !== 'string' || !(pttl > 0)) return;
      const durationMs = Number(parseJson(value)?.durationMs) || pttl;
      this.local.applyCooldown(k.slice(`${this.prefix}cooldown:`.length), { remainingMs: pttl, durationMs });
    });
  }

  private async resync(): Promise<void> {
    try {
      await this.load();
      for (const c of this.local.cooldowns(this.now())) this.announceCooldown(c.id, c);
    } catch (e) {
      this.failed(e);
    }
  }

  private failed(e: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.log.warn({ err: e }, 'deployment health: Redis did not answer; cooldowns are this instance\'s own until it does');
  }
}

/** Another version's (or anyone's) malformed message is skipped, never thrown on the connection's event. */
function parseJson(text: string): Record<string, any> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as Record<string, any>) : undefined;
  } catch {
    return undefined;
  }
}
