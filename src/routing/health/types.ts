/**
 * The health of a model's deployments, as routing reads it and the pipeline reports it. Reads are
 * synchronous (routing asks for every request); an implementation keeps what other instances
 * announced (Redis) in memory, so a cooldown set on one instance is skipped by all of them at once.
 */
export interface DeploymentHealth {
  /** Whether the deployment may be tried now: not cooling down, or due for a probe back. */
  available(deploymentId: string, nowMs: number): boolean;
  /** A call starts on the deployment; the returned function ends it (for least in-flight). */
  begin(deploymentId: string): () => void;
  /** Calls running on the deployment in this instance. */
  inFlight(deploymentId: string): number;
  /** Recent latency to first output (ms), for the lowest-latency strategy; undefined when unknown. */
  latencyMs(deploymentId: string): number | undefined;
  /** The call succeeded (its first output arrived after `latencyMs`): it ends a probe and resets failures. */
  recordSuccess(deploymentId: string, latencyMs: number, nowMs: number): void;
  /** The call failed in a way that counts against the deployment (see `DeploymentFailure`). */
  recordFailure(deploymentId: string, failure: DeploymentFailure, nowMs: number): void;
  /** Every known deployment's state, for the admin endpoint and the metrics. */
  snapshot(nowMs: number): DeploymentState[];
  close(): Promise<void>;
}

export interface DeploymentFailure {
  /** The upstream's HTTP status; undefined for a timeout or a connection error. */
  status?: number;
  /** The upstream's `retry-after`, in ms: the cooldown lasts at least this long. */
  retryAfterMs?: number;
}

export interface DeploymentState {
  id: string;
  state: 'healthy' | 'cooling_down' | 'probing';
  /** Failed calls over recent calls (0..1), in this instance's window. */
  errorRate: number;
  latencyMs?: number;
  inFlight: number;
  /** Unix ms when the cooldown ends (cooling_down only). */
  cooldownUntil?: number;
}
