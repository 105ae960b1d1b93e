import * as metrics from '../../util/metrics.js';
import { countsAgainst, DEFAULT_HEALTH_POLICY, retryAfterCooldown, type HealthPolicy } from './policy.js';
import type { DeploymentFailure, DeploymentHealth, DeploymentState } from './types.js';

/** A cooldown this instance started, as other instances are told of it. */
export interface Cooldown {
  /** How long it lasts from now (ms); instances' clocks may differ, so the length travels, not the end. */
  remainingMs: number;
  /** Its full length: a failed probe doubles it. */
  durationMs: number;
}

export interface LocalHealthOptions {
  /** The clock (ms) for what happens without a caller's `nowMs` (begin, announcements from other instances). */
  now?: () => number;
  /** A deployment's policy (its model's cooldown); the default policy when absent. */
  policyFor?: (deploymentId: string) => HealthPolicy;
  /** This instance started a cooldown (the shared store announces it). */
  onCooldown?: (deploymentId: string, cooldown: Cooldown) => void;
  /** A probe succeeded here: the cooldown is over everywhere. */
  onRecovered?: (deploymentId: string) => void;
}

interface Bucket {
  start: number;
  ok: number;
  failed: number;
}

interface Entry {
  failuresInARow: number;
  /** The error-rate window in six buckets, oldest first. */
  buckets: Bucket[];
  latencyMs?: number;
  inFlight: number;
  /** Set from a cooldown's start until a probe succeeds: cooling down before it, probing after. */
  cooldownUntil?: number;
  lastCooldownMs: number;
  probeInFlight: boolean;
}

const BUCKETS = 6;

/**
 * Deployment health in this process's memory: the store without Redis, and the memory of the
 * Redis-shared one (which feeds it other instances' cooldowns). Every read is synchronous.
 */
export class LocalDeploymentHealth implements DeploymentHealth {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly policyFor: (deploymentId: string) => HealthPolicy;
  private readonly readState = () => this.snapshot(this.now()).map((d) => ({ id: d.id, coolingDown: d.state === 'cooling_down' }));

  constructor(private readonly opts: LocalHealthOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.policyFor = opts.policyFor ?? (() => DEFAULT_HEALTH_POLICY);
    metrics.deploymentStateReaders.add(this.readState);
  }

  available(deploymentId: string, nowMs: number): boolean {
    const e = this.entries.get(deploymentId);
    if (!e || e.cooldownUntil === undefined) return true;
    // Probing: one call at a time from this instance.
    return nowMs >= e.cooldownUntil && !e.probeInFlight;
  }

  begin(deploymentId: string): () => void {
    const e = this.entry(deploymentId);
    e.inFlight++;
    metrics.deploymentInFlight.inc({ deployment: deploymentId });
    const probe = e.cooldownUntil !== undefined && this.now() >= e.cooldownUntil && !e.probeInFlight;
    if (probe) e.probeInFlight = true;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      e.inFlight--;
      metrics.deploymentInFlight.dec({ deployment: deploymentId });
      if (probe) e.probeInFlight = false;
    };
  }

  inFlight(deploymentId: string): number {
    return this.entries.get(deploymentId)?.inFlight ?? 0;
  }

  latencyMs(deploymentId: string): number | undefined {
    return this.entries.get(deploymentId)?.latencyMs;
  }

  recordSuccess(deploymentId: string, latencyMs: number, nowMs: number): void {
    const e = this.entry(deploymentId);
    const alpha = this.policyFor(deploymentId).latencyAlpha;
    e.latencyMs = e.latencyMs === undefined ? latencyMs : alpha * latencyMs + (1 - alpha) * e.latencyMs;
    e.failuresInARow = 0;
    metrics.deploymentRequests.inc({ deployment: deploymentId, outcome: 'success' });
    metrics.deploymentLatency.observe({ deployment: deploymentId }, latencyMs / 1000);
    // A call that started before the cooldown and ends within it proves nothing about now.
    if (e.cooldownUntil !== undefined && nowMs < e.cooldownUntil) {
      this.bucket(e, deploymentId, nowMs).ok++;
      return;
    }
    if (e.cooldownUntil !== undefined) {
      // The probe succeeded: healthy, with a fresh window (the failures that cooled it are over).
      e.cooldownUntil = undefined;
      e.lastCooldownMs = 0;
      e.buckets = [];
      this.opts.onRecovered?.(deploymentId);
    }
    this.bucket(e, deploymentId, nowMs).ok++;
  }

  recordFailure(deploymentId: string, failure: DeploymentFailure, nowMs: number): void {
    if (!countsAgainst(failure)) {
      metrics.deploymentRequests.inc({ deployment: deploymentId, outcome: 'ignored' });
      return;
    }
    metrics.deploymentRequests.inc({ deployment: deploymentId, outcome: 'failure' });
    const policy = this.policyFor(deploymentId);
    const e = this.entry(deploymentId);
    this.bucket(e, deploymentId, nowMs).failed++;
    e.failuresInARow++;
    const asked = retryAfterCooldown(failure, policy);
    if (e.cooldownUntil !== undefined && nowMs < e.cooldownUntil) {
      // Already cooling down (a call that started before): only a longer wait it asks for extends it.
      if (asked !== undefined && nowMs + asked > e.cooldownUntil) this.coolDown(deploymentId, e, asked, asked, nowMs);
      return;
    }
    if (e.cooldownUntil !== undefined) {
      // The probe (or a call during the probe) failed: twice the last cooldown, at least the policy's.
      const doubled = Math.min(Math.max(e.lastCooldownMs * 2, policy.cooldownMs), policy.maxCooldownMs);
      return this.coolDown(deploymentId, e, Math.max(doubled, asked ?? 0), doubled, nowMs, 'probe');
    }
    if (asked !== undefined) return this.coolDown(deploymentId, e, asked, asked, nowMs, 'retry_after');
    if (e.failuresInARow >= policy.failuresInARow) return this.coolDown(deploymentId, e, policy.cooldownMs, policy.cooldownMs, nowMs, 'failures');
    const { calls, failed } = this.window(e, policy, nowMs);
    if (calls >= policy.minCalls && failed / calls >= policy.errorRate) {
      this.coolDown(deploymentId, e, policy.cooldownMs, policy.cooldownMs, nowMs, 'error_rate');
    }
  }

  /**
   * Another instance cooled the deployment down (or this one did, before a restart): applied at
   * once, never shortening a cooldown this instance knows to last longer.
   */
  applyCooldown(deploymentId: string, cooldown: Cooldown): void {
    const e = this.entry(deploymentId);
    const until = this.now() + cooldown.remainingMs;
    if (e.cooldownUntil === undefined || until > e.cooldownUntil) e.cooldownUntil = until;
    e.lastCooldownMs = Math.max(e.lastCooldownMs, cooldown.durationMs);
  }

  /** Another instance's probe succeeded: the deployment is healthy again here too. */
  applyRecovery(deploymentId: string): void {
    const e = this.entries.get(deploymentId);
    if (!e || e.cooldownUntil === undefined) return;
    e.cooldownUntil = undefined;
    e.lastCooldownMs = 0;
    e.failuresInARow = 0;
  }

  /** Cooldowns running now, with what is left of each (the shared store writes them back after an outage). */
  cooldowns(nowMs: number): Array<{ id: string } & Cooldown> {
    const out: Array<{ id: string } & Cooldown> = [];
    for (const [id, e] of this.entries) {
      if (e.cooldownUntil !== undefined && nowMs < e.cooldownUntil) out.push({ id, remainingMs: e.cooldownUntil - nowMs, durationMs: e.lastCooldownMs });
    }
    return out;
  }

  snapshot(nowMs: number): DeploymentState[] {
    return [...this.entries].map(([id, e]) => {
      const { calls, failed } = this.window(e, this.policyFor(id), nowMs);
      const state = e.cooldownUntil === undefined ? 'healthy' : nowMs < e.cooldownUntil ? 'cooling_down' : 'probing';
      return {
        id,
        state,
        errorRate: calls === 0 ? 0 : failed / calls,
        latencyMs: e.latencyMs,
        inFlight: e.inFlight,
        ...(state === 'cooling_down' ? { cooldownUntil: e.cooldownUntil } : {}),
      };
    });
  }

  async close(): Promise<void> {
    metrics.deploymentStateReaders.delete(this.readState);
  }

  private coolDown(id: string, e: Entry, ms: number, durationMs: number, nowMs: number, reason?: string): void {
    e.cooldownUntil = nowMs + ms;
    e.lastCooldownMs = durationMs;
    e.failuresInARow = 0;
    if (reason) metrics.deploymentCooldowns.inc({ deployment: id, reason });
    this.opts.onCooldown?.(id, { remainingMs: ms, durationMs });
  }

  private entry(id: string): Entry {
    let e = this.entries.get(id);
    if (!e) {
      e = { failuresInARow: 0, buckets: [], inFlight: 0, lastCooldownMs: 0, probeInFlight: false };
      this.entries.set(id, e);
    }
    return e;
  }

  /** The bucket `nowMs` falls in, the window's expired buckets dropped. */
  private bucket(e: Entry, id: string, nowMs: number): Bucket {
    const width = this.policyFor(id).windowMs / BUCKETS;
    const start = Math.floor(nowMs / width) * width;
    e.buckets = e.buckets.filter((b) => b.start > start - BUCKETS * width);
    let b = e.buckets.at(-1);
    if (!b || b.start !== start) {
      b = { start, ok: 0, failed: 0 };
      e.buckets.push(b);
    }
    return b;
  }

  private window(e: Entry, policy: HealthPolicy, nowMs: number): { calls: number; failed: number } {
    const width = policy.windowMs / BUCKETS;
    const oldest = Math.floor(nowMs / width) * width - (BUCKETS - 1) * width;
    let calls = 0;
    let failed = 0;
    for (const b of e.buckets) {
      if (b.start < oldest) continue;
      calls += b.ok + b.failed;
      failed += b.failed;
    }
    return { calls, failed };
  }
}
