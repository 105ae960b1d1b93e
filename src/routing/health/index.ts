import { LocalDeploymentHealth, type LocalHealthOptions } from './local-health.js';
import { RedisDeploymentHealth } from './redis-health.js';
import type { DeploymentHealth } from './types.js';

export type { DeploymentFailure, DeploymentHealth, DeploymentState } from './types.js';
export { DEFAULT_HEALTH_POLICY, catalogPolicy, countsAgainst, type HealthPolicy } from './policy.js';
export { LocalDeploymentHealth, type Cooldown, type LocalHealthOptions } from './local-health.js';
export { RedisDeploymentHealth } from './redis-health.js';

/** Shared by every instance through Redis when a URL is given, else this process's own. */
export async function openDeploymentHealth(
  opts: LocalHealthOptions & { redisUrl?: string; log: { warn(obj: object, msg?: string): void }; prefix?: string },
): Promise<DeploymentHealth> {
  return opts.redisUrl ? RedisDeploymentHealth.connect(opts.redisUrl, opts) : new LocalDeploymentHealth(opts);
}
