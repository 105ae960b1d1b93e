/** The attempt loop: candidates tried one after another, streamed to the client or collected. */
import type { StreamEvent } from '../ir/index.js';
import { closeOpenBlocks } from './run-attempt.js';
import { type Launched, launchAttempt } from './launch-attempt.js';
import type { AttemptsRun, FallbackEvent } from './run-state.js';
import { endAttempt, serving } from './attempt-verdict.js';

/**
 * Streamed: events go out as they come. A refusal before any output is invisible apart from the
 * `fallback` event placed right after `start`; after output the refused blocks are closed,
 * `fallback` follows and the next model continues in the same stream (one `start` only).
 * Warnings noted once the stream (and its headers) went out, a later candidate's or what a
 * provider reported mid-attempt, follow as `warning` events before the next event.
 */
export async function* streamAttempts(run: AttemptsRun): AsyncGenerator<StreamEvent> {
  const held: FallbackEvent[] = [];
  let startSent = false;
  // How many of the run's warnings the client has: those in the headers, then those streamed.
  let told = 0;
  const late = function* (): Generator<StreamEvent> {
    const warnings = run.summary.warnings ?? [];
    if (startSent) for (const message of warnings.slice(told)) yield { type: 'warning', message };
    told = warnings.length;
  };
  // Each turn is one attempt; endAttempt throws, ends the run or moves to the next attempt.
  for (;;) {
    const launched = startAttempt(run);
    yield* late();
    let step = await launched.first;
    for (; !step.done; step = await launched.attempt.next()) {
      const ev = step.value;
      if (ev.type !== 'start') {
        yield* late();
        yield ev;
      } else if (!startSent) {
        // The first output of the run: its model is the one replying now. The warnings noted
        // so far go in the headers, built when this first event is read.
        startSent = true;
        run.ctx.trace?.firstToken();
        told = run.summary.warnings?.length ?? 0;
        serving(run.summary, launched.cand);
        yield ev;
        yield* held.splice(0);
      }
    }
    const verdict = endAttempt(run, launched, step.value.outcome, true);
    if (verdict.kind === 'cancelled') return;
    // Nothing of the attempt reached the client: another deployment serves the same model.
    if (verdict.kind === 'another_deployment') continue;
    if (verdict.kind === 'fallback') {
      if (!startSent) held.push(verdict.event);
      else {
        yield* closeOpenBlocks(launched.meter);
        yield* late();
        yield verdict.event;
      }
      continue;
    }
    if (!startSent) {
      told = run.summary.warnings?.length ?? 0;
      startSent = true;
      yield step.value.start;
      yield* held;
    }
    yield* closeOpenBlocks(launched.meter);
    yield* late();
    yield verdict.event;
    return;
  }
}

/**
 * Collected (not streamed): each attempt is buffered, and a refused attempt's output is dropped
 * (the client never saw it; it is still billed), so the answer holds the replier's `start` and
 * content plus the `fallback` records.
 */
export async function* collectAttempts(run: AttemptsRun): AsyncGenerator<StreamEvent> {
  const fallbacks: FallbackEvent[] = [];
  for (;;) {
    const launched = startAttempt(run);
    const buffered: StreamEvent[] = [];
    let step = await launched.first;
    for (; !step.done; step = await launched.attempt.next()) buffered.push(step.value);
    const verdict = endAttempt(run, launched, step.value.outcome, false);
    if (verdict.kind === 'cancelled') return;
    if (verdict.kind === 'another_deployment') continue;
    if (verdict.kind === 'fallback') {
      fallbacks.push(verdict.event);
      continue;
    }
    yield buffered[0]?.type === 'start' ? buffered.shift()! : step.value.start;
    yield* fallbacks;
    yield* buffered;
    yield* closeOpenBlocks(launched.meter);
    yield verdict.event;
    return;
  }
}

function startAttempt(run: AttemptsRun): Launched {
  const launched = run.early ?? launchAttempt(run.deps, run.ctx, run.req, run.next, run.launches, run.summary);
  run.early = undefined;
  run.launches++;
  run.inFlight = launched;
  return launched;
}
