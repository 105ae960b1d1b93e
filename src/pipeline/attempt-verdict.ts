/** An attempt's verdict: what it is recorded as, and whether the run ends, moves to another deployment or falls back. */
import { addUsage, emptyUsage, GatewayError, isGatewayError, type Attempt, type Request, type StreamEvent } from '../ir/index.js';
import { anotherAvailable, nextStep, onDeployment, pickDeployment, refusalReason, fallbackMessage, type AttemptOutcome, type Candidate } from '../routing/index.js';
import { billableUsage } from './meter-output.js';
import { endAttemptTrace } from './trace-attempt.js';
import type { PipelineDeps, RunSummary } from './types.js';
import type { Launched } from './launch-attempt.js';
import type { Hops, AttemptsRun, FallbackEvent } from './run-state.js';
import { chargeAttempt } from './bill-run.js';

type Verdict =
  | { kind: 'cancelled' }
  | { kind: 'another_deployment' }
  | { kind: 'fallback'; event: FallbackEvent }
  | { kind: 'finished'; event: Extract<StreamEvent, { type: 'finish' }> };

/**
 * An attempt has ended: bill it, record it, and decide what comes next. Throws what the client
 * must get as an error (an upstream failure with no fallback left, a drain's deadline).
 */
export function endAttempt(run: AttemptsRun, launched: Launched, outcome: AttemptOutcome, streamed: boolean): Verdict {
  const { deps, ctx, candidates, summary } = run;
  const cand = launched.cand;
  launched.unlink();
  launched.health.end(outcome);
  run.inFlight = undefined;
  // A non-streamed client never sees a failed attempt's output (nor one the drain ended): it
  // pays for the input only; the tokens stay on its usage record, the operator's cost.
  const unseen = !streamed && (outcome.kind === 'failed' || (outcome.kind === 'cancelled' && isGatewayError(ctx.signal.reason)));
  chargeAttempt(run.charges, summary, cand, launched.meter, outcome.kind === 'failed', unseen);
  if (launched.trace) endAttemptTrace(launched.trace, outcome, billableUsage(launched.meter, summary.inputTokens), launched.output);
  const record = attemptRecord(cand, outcome);
  summary.attempts.push(record);
  serving(summary, cand);
  if (outcome.kind === 'cancelled') {
    summary.status = 'cancelled';
    // Stopped by the gateway (a drain's deadline), not by the client, who is still there:
    // it gets the reason as an upstream failure's error, after what it already received.
    if (isGatewayError(ctx.signal.reason)) throw ctx.signal.reason;
    return { kind: 'cancelled' };
  }
  const otherDeployment = anotherAvailable(cand.model.deployments, run.hops.tried, cand.deployment.id, deps.health, deps.now());
  const next = nextStep(outcome, run.model + 1 < candidates.length, cand.model.fallbackOnUnavailable, otherDeployment);
  if (next === 'another_deployment') {
    run.next = pickFor(deps, run.req, candidates[run.model], run.hops);
    return { kind: 'another_deployment' };
  }
  if (next === 'next') {
    const to = candidates[++run.model];
    run.next = pickFor(deps, run.req, to, run.hops);
    const event: FallbackEvent = {
      type: 'fallback',
      from: cand.model.id,
      to: to.model.id,
      reason: refusalReason(outcome),
      outcome: record.outcome === 'refusal' ? 'refusal' : 'error',
      variant: to.variant,
      message: fallbackMessage(cand.model.id, to.model.id, outcome),
    };
    return { kind: 'fallback', event };
  }
  if (next === 'fail' && outcome.kind === 'failed') throw outcome.error;
  if (outcome.kind !== 'finished') throw new GatewayError('api_error', 'the run ended without an answer');
  summary.status = outcome.finish.unified === 'refusal' ? 'refused' : 'ok';
  const usage = run.charges.reduce((acc, c) => addUsage(acc, c.usage), emptyUsage());
  const cost = run.charges.reduce((sum, c) => sum + c.cost, 0n);
  return { kind: 'finished', event: { type: 'finish', finish: outcome.finish, usage, cost, attempts: [...summary.attempts] } };
}

/**
 * The candidate on the deployment picked for it now (`routing/pick-deployment.ts`), marked
 * tried. While another deployment is available the call gets no retries of its own: a retryable
 * failure moves to that deployment at once; the last one keeps its provider's retries.
 */
export function pickFor(deps: PipelineDeps, req: Request, cand: Candidate, hops: Hops): Candidate {
  const nowMs = deps.now();
  const { deployments, routing } = cand.model;
  const d = pickDeployment({ deployments, routing, health: deps.health, nowMs, random: deps.random ?? Math.random, session: hops.session, tried: hops.tried });
  if (!d) throw new GatewayError('api_error', `every deployment of model ${cand.model.id} was tried`);
  hops.tried.add(d.id);
  const picked = onDeployment(cand, d, req);
  if (anotherAvailable(deployments, hops.tried, d.id, deps.health, nowMs)) picked.target.maxRetries = 0;
  return picked;
}

export function serving(summary: RunSummary, cand: Candidate): void {
  summary.servedModel = cand.model.id;
  summary.servedVariant = cand.variant;
}

/** The attempt as reported: its model, and its deployment when the model has several. */
export function attemptRecord(cand: Candidate, outcome: AttemptOutcome): Attempt {
  const where = { model: cand.model.id, ...(cand.model.deployments.length > 1 ? { deployment: cand.deployment.id } : {}) };
  if (outcome.kind === 'finished') {
    return outcome.finish.unified === 'refusal' ? { ...where, outcome: 'refusal', reason: refusalReason(outcome) } : { ...where, outcome: 'ok' };
  }
  if (outcome.kind === 'cancelled') return { ...where, outcome: 'error', reason: 'client disconnected' };
  return { ...where, outcome: outcome.error.code === 'content_filter' ? 'refusal' : 'error', reason: outcome.error.message };
}
