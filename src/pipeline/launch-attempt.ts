/** Starting one candidate's attempt: the provider call it makes, its meter, health watch and span. */
import type { Request, StreamEvent } from '../ir/index.js';
import { ceilingWarning, resolveReasoning, type Candidate } from '../routing/index.js';
import { capabilitiesOf } from '../providers/capabilities.js';
import type { ProviderCall } from '../providers/types.js';
import { droppedFeatures } from './dropped-features.js';
import { billableUsage, OutputMeter } from './meter-output.js';
import { watchDeployment, type HealthWatch } from './report-health.js';
import { runAttempt, type AttemptResult } from './run-attempt.js';
import { endAttemptTrace, OutputCapture, traceAttempt } from './trace-attempt.js';
import type { AttemptTrace } from '../telemetry/types.js';
import type { CallContext, PipelineDeps, RunSummary } from './types.js';

/** One candidate's attempt, started: its upstream call is under way. */
export interface Launched {
  cand: Candidate;
  meter: OutputMeter;
  /** The call as its deployment's health sees it. */
  health: HealthWatch;
  attempt: AsyncGenerator<StreamEvent, AttemptResult>;
  /** The attempt's first step, asked for at launch so the upstream call starts at once. */
  first: Promise<IteratorResult<StreamEvent, AttemptResult>>;
  /** Stops listening to the client's signal. */
  unlink: () => void;
  /** Its span, when the request is traced. */
  trace?: AttemptTrace;
  /** What it produced, when message content is captured. */
  output?: OutputCapture;
  /**
   * Stops the upstream call and waits for the attempt to end; what it produced stays in `meter`.
   * Never throws.
   */
  cancel: () => Promise<void>;
}

export function launchAttempt(deps: PipelineDeps, ctx: CallContext, req: Request, cand: Candidate, index: number, summary: RunSummary): Launched {
  const stop = new AbortController();
  // The upstream call stops when the client goes away or the run stops the attempt: the
  // client's signal aborts this attempt's controller (cheaper than AbortSignal.any per call).
  const onClientGone = () => stop.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onClientGone, { once: true });
  const unlink = () => ctx.signal.removeEventListener('abort', onClientGone);
  if (ctx.signal.aborted) stop.abort(ctx.signal.reason);
  const meter = new OutputMeter(cand.maxTokens);
  const health = watchDeployment(deps.health, cand.deployment.id, deps.now);
  const warn = (message: string) => noteWarnings(deps, ctx, summary, [message]);
  const call = providerCall(deps, ctx, req, cand, summary, stop);
  const span = traceAttempt(deps, ctx.trace, req, cand, index, call.request.stream);
  call.observe = span;
  const output = span && ctx.trace?.captureContent ? new OutputCapture() : undefined;
  const run = runAttempt(deps, call, cand, index, ctx.signal, stop, meter, warn);
  const attempt = output ? output.watch(run) : run;
  const first = attempt.next();
  // The first step comes with the first output (runAttempt yields `start` right before it).
  // runAttempt ends in an outcome rather than a throw; the rejection handler only keeps a stray
  // rejection from counting as unhandled while startRun still waits for the hold.
  first.then((step) => step.done || (health.firstOutput(), span?.firstChunk()), () => undefined);
  const cancel = async () => {
    stop.abort();
    unlink();
    // Queued behind the step under way, if any: resolves once the attempt has ended.
    await attempt.return(undefined as never).catch(() => undefined);
    health.end();
    endAttemptTrace(span, { kind: 'cancelled' }, billableUsage(meter, summary.inputTokens), output);
  };
  return { cand, meter, health, attempt, first, unlink, cancel, trace: span, output };
}

/**
 * A non-streamed request whose ceiling is above this many tokens still streams upstream (the
 * pipeline collects it). An answer that long can take more than 10 minutes, past which Anthropic's
 * SDKs refuse a non-streamed call (3,600 s × max_tokens / 128,000) and idle connections get cut;
 * streamed, it also keeps the exact billing of what was produced if the client leaves. Shorter
 * answers come as one JSON body: one read and one parse instead of one per token.
 */
const WHOLE_ANSWER_MAX_TOKENS = 21_333;

/**
 * The call for one candidate: the request with this candidate's ceiling and reasoning, streamed
 * upstream when the client streams or the answer may be long.
 */
function providerCall(deps: PipelineDeps, ctx: CallContext, req: Request, cand: Candidate, summary: RunSummary, stop: AbortController): ProviderCall {
  const can = capabilitiesOf(deps.providers, cand.target);
  const resolved = resolveReasoning(req.reasoning, {
    maxTokens: cand.maxTokens,
    modelReasons: cand.model.capabilities.reasoning,
    minBudget: can.thinking.minBudget,
    modelId: cand.model.id,
    forcedToolBlocksThinking: can.thinking.forcedToolBlocksThinking && (req.toolChoice?.type === 'required' || req.toolChoice?.type === 'tool'),
  });
  const warnings = [ceilingWarning(req, cand), ...droppedFeatures(req, can), resolved.warning];
  noteWarnings(deps, ctx, summary, warnings.filter((w) => w !== undefined));
  return {
    request: { ...req, maxTokens: cand.maxTokens, reasoning: resolved.reasoning, stream: req.stream || cand.maxTokens > WHOLE_ANSWER_MAX_TOKENS },
    target: cand.target,
    requestId: ctx.requestId,
    signal: stop.signal,
    clientStreams: req.stream,
  };
}

/** Warnings are logged and reported once each (x-switchyard-warnings). */
function noteWarnings(deps: PipelineDeps, ctx: CallContext, summary: RunSummary, warnings: string[]): void {
  for (const w of warnings) {
    if (summary.warnings?.includes(w)) continue;
    (summary.warnings ??= []).push(w);
    deps.log.warn({ requestId: ctx.requestId }, w);
  }
}
