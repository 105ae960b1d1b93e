import type { Catalog } from '../catalog.js';
import type { DeploymentFailure } from './types.js';

/**
 * When a deployment cools down and for how long (spec/DECISIONS.md, "Deployment health"). The
 * defaults follow LiteLLM's router (a few failures, or most calls failing, cool a deployment;
 * a retry-after is honoured) with Portkey's doubling of a cooldown whose probe failed.
 */
export interface HealthPolicy {
  /** A cooldown after repeated failures, and the first step of the doubling. */
  cooldownMs: number;
  /** The shortest cooldown a retry-after starts (a retry-after of 0 or 1 s still rests the deployment). */
  minRetryAfterCooldownMs: number;
  /** A failed probe doubles the last cooldown, up to this. */
  maxCooldownMs: number;
  /** Failures in a row (no success between) that cool a deployment down. */
  failuresInARow: number;
  /** The error-rate window (ms) and the rule over it: at least `minCalls` calls, `errorRate` or more failed. */
  windowMs: number;
  minCalls: number;
  errorRate: number;
  /** Weight of the newest latency in the moving average (0..1). */
  latencyAlpha: number;
}

export const DEFAULT_HEALTH_POLICY: HealthPolicy = {
  cooldownMs: 30_000,
  minRetryAfterCooldownMs: 5_000,
  maxCooldownMs: 300_000,
  failuresInARow: 3,
  windowMs: 60_000,
  minCalls: 10,
  errorRate: 0.5,
  latencyAlpha: 0.3,
};

/** Statuses whose retry-after means "this deployment is out of capacity for that long". */
const BUSY = new Set([429, 503, 529]);

/**
 * Whether a failure counts against the deployment: timeouts and connection errors (no status),
 * 408, 429 and every 5xx (529 included) do; any other 4xx is the client's request, not the
 * deployment's health.
 */
export function countsAgainst(failure: DeploymentFailure): boolean {
  const s = failure.status;
  return s === undefined || s === 408 || s === 429 || s >= 500;
}

/** A cooldown's length when the deployment asked for a wait (a busy status with retry-after), else undefined. */
export function retryAfterCooldown(failure: DeploymentFailure, policy: HealthPolicy): number | undefined {
  if (failure.status === undefined || !BUSY.has(failure.status) || failure.retryAfterMs === undefined) return undefined;
  return Math.max(failure.retryAfterMs, policy.minRetryAfterCooldownMs);
}

/**
 * Each deployment's policy under the catalog in use (read at every call, so a reloaded catalog
 * applies at once): its model's `routing.cooldown_ms` when configured, the default otherwise. A
 * failed probe's doubling is capped at 5 minutes, or at the cooldown itself when that is longer.
 */
export function catalogPolicy(catalog: () => Catalog): (deploymentId: string) => HealthPolicy {
  const memo = new WeakMap<Catalog, Map<string, HealthPolicy>>();
  return (deploymentId) => {
    const c = catalog();
    let byId = memo.get(c);
    if (!byId) memo.set(c, (byId = new Map()));
    let policy = byId.get(deploymentId);
    if (!policy) {
      // A deployment id is `<model id>/<name>`; a name holds no `/`, a model id may.
      const model = c.models.get(deploymentId.slice(0, deploymentId.lastIndexOf('/')));
      const cooldownMs = model?.routing.cooldownMs ?? DEFAULT_HEALTH_POLICY.cooldownMs;
      policy = { ...DEFAULT_HEALTH_POLICY, cooldownMs, maxCooldownMs: Math.max(DEFAULT_HEALTH_POLICY.maxCooldownMs, cooldownMs) };
      byId.set(deploymentId, policy);
    }
    return policy;
  };
}
