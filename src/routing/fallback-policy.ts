import type { Finish, GatewayError } from '../ir/index.js';

/** How one attempt ended, as the pipeline saw it. */
export type AttemptOutcome =
  | { kind: 'finished'; finish: Finish }
  | { kind: 'failed'; error: GatewayError; emittedOutput: boolean }
  | { kind: 'cancelled' };

/** `another_deployment`: the same model again, on a deployment not tried yet; `next`: the next candidate model. */
export type Step = 'done' | 'another_deployment' | 'next' | 'fail';

/** A classifier refusal, from any provider: refusal / content_filter finishes and content-policy errors. */
export function isRefusal(outcome: AttemptOutcome): boolean {
  if (outcome.kind === 'finished') return outcome.finish.unified === 'refusal';
  return outcome.kind === 'failed' && outcome.error.code === 'content_filter';
}

/**
 * The fallback policy, a pure function (style rule 9): after a refusal try the next candidate;
 * after a retryable upstream failure (429, 5xx, 529, timeout, connection error) before anything
 * reached the client, another available deployment of the same model first, then the next
 * candidate only when the model opted in to fallback on unavailability.
 */
export function nextStep(outcome: AttemptOutcome, hasNext: boolean, fallbackOnUnavailable: boolean, hasOtherDeployment = false): Step {
  if (outcome.kind === 'cancelled') return 'done';
  if (isRefusal(outcome)) return hasNext ? 'next' : outcome.kind === 'finished' ? 'done' : 'fail';
  if (outcome.kind === 'finished') return 'done';
  if (hasOtherDeployment && outcome.error.retryable && !outcome.emittedOutput) return 'another_deployment';
  if (hasNext && fallbackOnUnavailable && outcome.error.retryable && !outcome.emittedOutput) return 'next';
  return 'fail';
}

export function refusalReason(outcome: AttemptOutcome): string {
  if (outcome.kind === 'finished') return `refusal (${outcome.finish.raw ?? outcome.finish.unified})`;
  if (outcome.kind === 'failed') return outcome.error.code === 'content_filter' ? 'refusal (content_filter)' : `unavailable (${outcome.error.kind})`;
  return 'cancelled';
}

/** The fallback's note for a person: who stopped, why (a refusal's own explanation), and who answers now. */
export function fallbackMessage(from: string, to: string, outcome: AttemptOutcome): string {
  const answers = `${to} answers instead.`;
  if (outcome.kind === 'finished') {
    const explanation = outcome.finish.details?.explanation;
    return typeof explanation === 'string' && explanation ? `${from} refused: ${explanation.trim().replace(/\.?$/, '.')} ${answers}` : `${from} refused. ${answers}`;
  }
  if (outcome.kind === 'failed') {
    return outcome.error.code === 'content_filter' ? `${from}'s answer was stopped by its content filter. ${answers}` : `${from} is unavailable (${outcome.error.kind}). ${answers}`;
  }
  return `${from} was cancelled. ${answers}`;
}
