import type { GatewayError } from '../ir/index.js';
import type { AttemptOutcome } from '../routing/index.js';
import type { DeploymentFailure, DeploymentHealth } from '../routing/health/index.js';

/** One upstream call as the deployment health sees it: begun at launch, ended once. */
export interface HealthWatch {
  /** The attempt's first output arrived (its latency is measured to here). */
  firstOutput(): void;
  /** The call is over: a success, a failure, or (no outcome, or cancelled) nothing to report. */
  end(outcome?: AttemptOutcome): void;
}

/**
 * Begins a call on the deployment (it counts as in flight until `end`) and reports how it ended:
 * a finish (a refusal too: the deployment answered) is a success with its latency to first
 * output; a failure carries the upstream's status and retry-after, and the health store decides
 * whether it counts against the deployment (a 400 does not).
 */
export function watchDeployment(health: DeploymentHealth, deploymentId: string, now: () => number): HealthWatch {
  const started = now();
  const finishCall = health.begin(deploymentId);
  let firstOutputAt: number | undefined;
  let ended = false;
  return {
    firstOutput() {
      firstOutputAt ??= now();
    },
    end(outcome) {
      if (ended) return;
      ended = true;
      finishCall();
      if (outcome?.kind === 'finished') health.recordSuccess(deploymentId, (firstOutputAt ?? now()) - started, now());
      else if (outcome?.kind === 'failed') health.recordFailure(deploymentId, failureOf(outcome.error), now());
    },
  };
}

/**
 * The upstream's status when it answered one (a timeout or a connection error has none); an
 * error of the gateway's own keeps its status, so that only retryable ones count as outages.
 */
function failureOf(error: GatewayError): DeploymentFailure {
  const upstream = (error.details?.upstream as { status?: unknown } | undefined)?.status;
  const status = typeof upstream === 'number' ? upstream : error.retryable ? undefined : error.status;
  return { ...(status !== undefined ? { status } : {}), ...(error.retryAfter !== undefined ? { retryAfterMs: error.retryAfter * 1000 } : {}) };
}
