import type { Catalog, Deployment, ModelEntry } from '../routing/index.js';
import type { DeploymentHealth, DeploymentState } from '../routing/health/index.js';
import type { HandlerResult } from './types.js';

/** GET /admin/deployments: every deployment of every catalog model, with its health on this instance. */
export function listDeployments(catalog: Catalog, health: DeploymentHealth, nowMs: number): HandlerResult {
  const known = new Map(health.snapshot(nowMs).map((d) => [d.id, d]));
  const data = [...catalog.models.values()].flatMap((m) => m.deployments.map((d) => deploymentBody(m, d, known.get(d.id))));
  return { kind: 'json', status: 200, body: { object: 'list', data } };
}

function deploymentBody(m: ModelEntry, d: Deployment, s: DeploymentState | undefined) {
  return {
    id: d.id,
    model: m.id,
    provider: d.provider.id,
    upstream_model: d.upstreamModel,
    weight: d.weight,
    state: s?.state ?? 'healthy',
    error_rate: s?.errorRate ?? 0,
    latency_ms: s?.latencyMs === undefined ? null : Math.round(s.latencyMs * 10) / 10,
    in_flight: s?.inFlight ?? 0,
    cooldown_until: s?.cooldownUntil === undefined ? null : new Date(s.cooldownUntil).toISOString(),
  };
}
