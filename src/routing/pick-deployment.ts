import { createHash } from 'node:crypto';
import type { Request } from '../ir/index.js';
import type { Deployment, Routing } from './catalog.js';
import type { DeploymentHealth } from './health/types.js';

/** What picking reads of the deployments' health. */
export type HealthReads = Pick<DeploymentHealth, 'available' | 'inFlight' | 'latencyMs' | 'snapshot'>;

export interface PickInput {
  deployments: readonly Deployment[];
  routing: Routing;
  health: HealthReads;
  nowMs: number;
  /** Uniform in [0, 1): Math.random, or a seeded one in tests. */
  random: () => number;
  /** The request's session identity (see `affinityKey`); none: the strategy decides. */
  session?: string;
  /** Deployments this request already tried: never picked again. */
  tried?: ReadonlySet<string>;
}

/**
 * The deployment a request goes to (spec/DECISIONS.md, "Deployments and routing"), undefined
 * once every deployment was tried. Among those not tried and available now:
 * - a request with a session identity goes where rendezvous hashing puts it (the highest
 *   weighted random score of session and deployment id), so every instance agrees without shared
 *   state and a session moves only when its deployment becomes unavailable;
 * - otherwise the model's strategy chooses: at random by weight, the fewest calls in flight, or
 *   the lowest recent latency (an unmeasured deployment first); ties go at random by weight.
 * When none is available, the one whose cooldown ends first is tried rather than failing outright:
 * the request may still succeed, and it is the deployment due for a probe soonest.
 */
export function pickDeployment(input: PickInput): Deployment | undefined {
  const untried = input.deployments.filter((d) => !input.tried?.has(d.id));
  if (untried.length === 0) return undefined;
  const available = untried.filter((d) => input.health.available(d.id, input.nowMs));
  if (available.length === 0) return soonestBack(untried, input);
  if (input.session !== undefined && input.routing.sessionAffinity) return rendezvous(available, input.session);
  switch (input.routing.strategy) {
    case 'weighted':
      return weightedRandom(available, input.random);
    case 'least_in_flight':
      return weightedRandom(lowest(available, (d) => input.health.inFlight(d.id)), input.random);
    case 'lowest_latency': {
      const unmeasured = available.filter((d) => input.health.latencyMs(d.id) === undefined);
      const pool = unmeasured.length > 0 ? unmeasured : lowest(available, (d) => input.health.latencyMs(d.id)!);
      return weightedRandom(pool, input.random);
    }
  }
}

/** Whether another deployment than `current`, not yet tried, is available now. */
export function anotherAvailable(deployments: readonly Deployment[], tried: ReadonlySet<string>, current: string, health: HealthReads, nowMs: number): boolean {
  return deployments.some((d) => d.id !== current && !tried.has(d.id) && health.available(d.id, nowMs));
}

/** The deployments with the lowest value of `score` (several when tied). */
function lowest(pool: Deployment[], score: (d: Deployment) => number): Deployment[] {
  const min = Math.min(...pool.map(score));
  return pool.filter((d) => score(d) === min);
}

function weightedRandom(pool: Deployment[], random: () => number): Deployment {
  const total = pool.reduce((sum, d) => sum + d.weight, 0);
  let r = random() * total;
  for (const d of pool) {
    r -= d.weight;
    if (r < 0) return d;
  }
  return pool[pool.length - 1];
}

/** The untried deployment whose cooldown ends first (one probing elsewhere counts as back now). */
function soonestBack(untried: Deployment[], input: PickInput): Deployment {
  const until = new Map(input.health.snapshot(input.nowMs).map((s) => [s.id, s.cooldownUntil ?? input.nowMs]));
  return lowest(untried, (d) => until.get(d.id) ?? input.nowMs)[0];
}

/**
 * Weighted rendezvous (highest random weight) hashing: each deployment scores
 * `-weight / ln(u)` with `u` a uniform hash of the session and the deployment id, and the
 * highest score wins. A session lands on a deployment with probability proportional to its
 * weight, and removing a deployment moves only the sessions that were on it.
 */
export function rendezvous(pool: readonly Deployment[], session: string): Deployment {
  let best = pool[0];
  let bestScore = -Infinity;
  for (const d of pool) {
    const score = -d.weight / Math.log(uniformHash(`${session}\u0000${d.id}`));
    if (score > bestScore) {
      best = d;
      bestScore = score;
    }
  }
  return best;
}

/** A hash of `text` as a number strictly between 0 and 1. */
function uniformHash(text: string): number {
  const digest = createHash('sha256').update(text).digest();
  return (digest.readUIntBE(0, 6) + 0.5) / 2 ** 48;
}

/**
 * A request's session identity, for affinity: its session (Claude Code's session header, else
 * OpenAI's `prompt_cache_key`, as usage attribution reads them), else its end user (`user`,
 * `safety_identifier`, Anthropic's `metadata.user_id`).
 */
export function affinityKey(req: Pick<Request, 'attribution'>): string | undefined {
  return req.attribution?.session ?? req.attribution?.endUser;
}
