import {
  addUsage,
  emptyUsage,
  GatewayError,
  inputTotal,
  isGatewayError,
  type Attempt,
  type Request,
  type StreamEvent,
} from '../ir/index.js';
import { DatabaseDeadline, priceUsage, requestHold, REQUEST_DB_WAIT_MS, roundUpToNanos, type Charge } from '../ledger/index.js';
import { refusedBy, type LimitDecision } from '../limits/index.js';
import {
  affinityKey,
  anotherAvailable,
  ceilingWarning,
  holdCandidate,
  nextStep,
  onDeployment,
  pickDeployment,
  planRoute,
  refusalReason,
  fallbackMessage,
  resolveReasoning,
  type AttemptOutcome,
  type Candidate,
} from '../routing/index.js';
import { capabilitiesOf } from '../providers/capabilities.js';
import type { ProviderCall } from '../providers/types.js';
import { withinDeadline } from '../util/deadline.js';
import * as metrics from '../util/metrics.js';
import { countRequestTokensAsync } from '../util/tokenizer.js';
import { droppedFeatures } from './dropped-features.js';
import { billableUsage, OutputMeter } from './meter-output.js';
import { watchDeployment, type HealthWatch } from './report-health.js';
import { closeOpenBlocks, runAttempt, type AttemptResult } from './run-attempt.js';
import { endAttemptTrace, OutputCapture, tokenCounts, traceAttempt } from './trace-attempt.js';
import type { AttemptTrace } from '../telemetry/types.js';
import type { CallContext, PipelineDeps, RunSummary } from './types.js';

export interface Run {
  /** The IR stream for the client. Ending it early (return()) cancels the run and settles it. */
  events: AsyncGenerator<StreamEvent>;
  summary: RunSummary;
}

/**
 * The completion pipeline: route, hold, try candidates, meter, settle. Everything that can fail
 * before a byte is sent (unknown model, bad ceiling, insufficient balance) throws from here, so
 * the handler renders it as an HTTP error.
 */
export async function startRun(deps: PipelineDeps, ctx: CallContext, req: Request): Promise<Run> {
  const candidates = planRoute(deps.catalog, req, ctx.allowedModels);
  const primary = candidates[0].model;
  // Counting stops once past the window: a 10 MB prompt is refused without tokenizing all of it.
  const inputTokens = await countRequestTokensAsync(req, primary.contextWindow);
  if (inputTokens > primary.contextWindow) {
    throw new GatewayError(
      'invalid_request',
      `the prompt is more than the ${primary.contextWindow}-token context window of ${primary.id}`,
      { param: 'messages', code: 'context_length_exceeded' },
    );
  }
  const summary: RunSummary = { attempts: [], inputTokens, cost: 0n };
  // Before the hold: a request over its key's limits costs nothing and takes no hold.
  const admitted = ctx.limits ? await deps.limiter.admit(limitsOwner(ctx), ctx.limits, inputTokens) : undefined;
  if (admitted && !admitted.allowed) throw rateLimitError(admitted, inputTokens);
  summary.rateLimit = admitted;
  const amount = requestHold(
    inputTokens,
    candidates.map((c) => ({ ...holdCandidate(c, req), inputMargin: capabilitiesOf(deps.providers, c.target).tokenizerMargin })),
    req.billing,
  );
  const hops: Hops = { tried: new Set(), session: affinityKey(req) };
  const first = pickFor(deps, req, candidates[0], hops);
  // An account this instance expects to afford the hold gets its first upstream call started
  // while the hold commits. Nothing reaches the client before the hold is placed; a refused hold
  // cancels the call, and the client gets the refusal and is charged nothing.
  const early = deps.ledger.holdLikelyPasses(ctx.accountId, amount) ? launchAttempt(deps, ctx, req, first, 0, summary) : undefined;
  const holdSpan = ctx.trace?.child('switchyard.ledger.hold', { 'switchyard.hold.nanodollars': Number(amount) });
  try {
    // A request waits about a second for its hold (a 503 after that); a hold the database commits
    // after the request gave up is released at once.
    const placing = deps.ledger.placeHold({ requestId: ctx.requestId, accountId: ctx.accountId, keyId: ctx.keyId, budgets: ctx.budgets, amount, ttlMs: deps.holdTtlMs });
    await withinDeadline(placing, REQUEST_DB_WAIT_MS, () => new DatabaseDeadline('the hold'), () => void releaseLate(deps, ctx.requestId));
    holdSpan?.end();
  } catch (e) {
    holdSpan?.fail(isGatewayError(e) ? (e.code ?? e.kind) : 'ledger_error', (e as Error)?.message);
    holdSpan?.end();
    if (early) {
      metrics.earlyUpstreamCalls.inc({ hold: 'refused' });
      await early.cancel();
    }
    // Nothing ran: the request and its input go back to the key's buckets.
    if (admitted) deps.limiter.adjust(limitsOwner(ctx), ctx.limits, { requests: -1, tokens: -inputTokens });
    throw e;
  }
  if (early) metrics.earlyUpstreamCalls.inc({ hold: 'placed' });
  return { events: runAttempts(deps, ctx, req, candidates, summary, { hops, next: first, early }), summary };
}

/** Releases a hold placed after its request was refused for waiting too long (the reaper would, much later). */
async function releaseLate(deps: PipelineDeps, requestId: string): Promise<void> {
  try {
    await deps.ledger.release(requestId);
  } catch (err) {
    deps.log.warn({ requestId, err }, 'could not release a hold placed after its request gave up; the reaper will');
  }
}

/** The deployments a run has tried (every model's: their ids are distinct) and its session identity. */
interface Hops {
  tried: Set<string>;
  session?: string;
}

/**
 * The candidate on the deployment picked for it now (`routing/pick-deployment.ts`), marked
 * tried. While another deployment is available the call gets no retries of its own: a retryable
 * failure moves to that deployment at once; the last one keeps its provider's retries.
 */
function pickFor(deps: PipelineDeps, req: Request, cand: Candidate, hops: Hops): Candidate {
  const nowMs = deps.now();
  const { deployments, routing } = cand.model;
  const d = pickDeployment({ deployments, routing, health: deps.health, nowMs, random: deps.random ?? Math.random, session: hops.session, tried: hops.tried });
  if (!d) throw new GatewayError('api_error', `every deployment of model ${cand.model.id} was tried`);
  hops.tried.add(d.id);
  const picked = onDeployment(cand, d, req);
  if (anotherAvailable(deployments, hops.tried, d.id, deps.health, nowMs)) picked.target.maxRetries = 0;
  return picked;
}

/** One candidate's attempt, started: its upstream call is under way. */
interface Launched {
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

function launchAttempt(deps: PipelineDeps, ctx: CallContext, req: Request, cand: Candidate, index: number, summary: RunSummary): Launched {
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
 * Tries the candidates in order, streamed or collected (see the two paths below), and settles
 * whatever happened: the hold heartbeat runs while they do, and an attempt still under way when
 * the consumer stops early (the client went away) is stopped and billed for what it produced.
 */
async function* runAttempts(
  deps: PipelineDeps,
  ctx: CallContext,
  req: Request,
  candidates: Candidate[],
  summary: RunSummary,
  /** The first attempt: its candidate, and its launch when startRun launched it already. */
  first: Pick<AttemptsRun, 'hops' | 'next' | 'early'>,
): AsyncGenerator<StreamEvent> {
  const started = deps.now();
  const stopHeartbeat = holdHeartbeat(deps, ctx);
  const run: AttemptsRun = { deps, ctx, req, candidates, summary, charges: [], model: 0, launches: 0, ...first };
  try {
    yield* req.stream ? streamAttempts(run) : collectAttempts(run);
  } catch (e) {
    summary.status = ctx.signal.aborted ? 'cancelled' : 'error';
    throw e;
  } finally {
    stopHeartbeat();
    const left = run.inFlight;
    if (left) {
      // Closed mid-attempt (the client went away): stop the upstream, bill what it produced.
      await left.cancel();
      chargeAttempt(run.charges, summary, left.cand, left.meter, false);
      summary.attempts.push(attemptRecord(left.cand, { kind: 'cancelled' }));
    }
    if (!summary.status) summary.status = 'cancelled';
    // Not awaited: the hold already covers the worst case, so the client need not wait for the
    // commit. The ledger's reads and close() wait for it, so nothing is lost or read stale.
    void settle(deps, ctx, req, summary, run.charges, deps.now() - started);
  }
}

/** What both paths share: the request, its candidates, and what has been charged so far. */
interface AttemptsRun {
  deps: PipelineDeps;
  ctx: CallContext;
  req: Request;
  candidates: Candidate[];
  summary: RunSummary;
  charges: Charge[];
  /** The index in `candidates` of the model being tried. */
  model: number;
  hops: Hops;
  /** The attempt to launch next (its model and deployment), unless `early` runs it already. */
  next: Candidate;
  early: Launched | undefined;
  /** Attempts launched so far (each gets its index for its block ids). */
  launches: number;
  /** The attempt under way, billed by runAttempts if the consumer stops while it runs. */
  inFlight?: Launched;
}

type FallbackEvent = Extract<StreamEvent, { type: 'fallback' }>;

/**
 * Streamed: events go out as they come. A refusal before any output is invisible apart from the
 * `fallback` event placed right after `start`; after output the refused blocks are closed,
 * `fallback` follows and the next model continues in the same stream (one `start` only).
 * Warnings noted once the stream (and its headers) went out, a later candidate's or what a
 * provider reported mid-attempt, follow as `warning` events before the next event.
 */
async function* streamAttempts(run: AttemptsRun): AsyncGenerator<StreamEvent> {
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
async function* collectAttempts(run: AttemptsRun): AsyncGenerator<StreamEvent> {
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

function serving(summary: RunSummary, cand: Candidate): void {
  summary.servedModel = cand.model.id;
  summary.servedVariant = cand.variant;
}

type Verdict =
  | { kind: 'cancelled' }
  | { kind: 'another_deployment' }
  | { kind: 'fallback'; event: FallbackEvent }
  | { kind: 'finished'; event: Extract<StreamEvent, { type: 'finish' }> };

/**
 * An attempt has ended: bill it, record it, and decide what comes next. Throws what the client
 * must get as an error (an upstream failure with no fallback left, a drain's deadline).
 */
function endAttempt(run: AttemptsRun, launched: Launched, outcome: AttemptOutcome, streamed: boolean): Verdict {
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

/** A 429 naming the limit that refused, with when to come back. */
function rateLimitError(d: LimitDecision, inputTokens: number): GatewayError {
  const rateLimit = { requests: d.requests, tokens: d.tokens };
  if (d.tooLarge) {
    // OpenAI's answer to a request larger than the limit: a 429 that waiting cannot cure.
    return new GatewayError('rate_limit', `Request too large: ${inputTokens} input tokens are more than this key's limit of ${d.tokens!.limit} tokens per minute (TPM).`, {
      code: 'rate_limit_exceeded',
      rateLimit,
    });
  }
  const by = refusedBy(d);
  const bucket = by === 'requests' ? d.requests! : d.tokens!;
  const seconds = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
  const what = by === 'requests' ? 'requests per minute (RPM)' : 'tokens per minute (TPM)';
  return new GatewayError('rate_limit', `Rate limit reached for ${what} on this key: limit ${bucket.limit}. Please try again in ${seconds}s.`, {
    code: 'rate_limit_exceeded',
    retryAfter: seconds,
    rateLimit,
  });
}

function recordMetrics(summary: RunSummary, charges: Charge[]): void {
  for (const a of summary.attempts) metrics.attempts.inc({ model: a.model, outcome: a.outcome });
  for (const c of charges) {
    const u = c.usage;
    const kinds = { input: u.input.noCache, cache_read: u.input.cacheRead, cache_write: u.input.cacheWrite, output: u.output.total, reasoning: u.output.reasoning };
    for (const [kind, n] of Object.entries(kinds)) if (n > 0) metrics.tokens.inc({ model: c.model, kind }, n);
    metrics.costNanodollars.inc({ model: c.model }, Number(c.cost));
  }
}

/**
 * Keeps the hold alive while the run goes on: every third of the TTL its expiry moves forward,
 * so a stream longer than the TTL is still settled, and only a dead process's hold expires.
 */
function holdHeartbeat(deps: PipelineDeps, ctx: CallContext): () => void {
  const every = Math.max(50, Math.floor(deps.holdTtlMs / 3));
  const timer = setInterval(() => {
    deps.ledger.extendHold(ctx.requestId, deps.holdTtlMs).catch((err) => deps.log.warn({ err, requestId: ctx.requestId }, 'could not extend the hold'));
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Adds an attempt's charge: the upstream's usage where it reported it, else the tokenizer over
 * what was produced. An attempt that failed before producing anything costs nothing. When the
 * client never received the output (`outputUnseen`), the cost covers the input only; the usage,
 * output tokens included, is recorded as it was. The request's cost is its attempts' exact sum
 * rounded up once: each charge is what its attempt adds to that rounded sum.
 */
function chargeAttempt(charges: Charge[], summary: RunSummary, cand: Candidate, meter: OutputMeter, failed: boolean, outputUnseen = false): void {
  if (failed && !meter.emittedOutput && !meter.usage) return;
  const usage = billableUsage(meter, summary.inputTokens);
  if (usage.output.total > 0 || usage.input.noCache + usage.input.cacheRead + usage.input.cacheWrite > 0 || usage.serverTools) {
    const billed = outputUnseen ? { ...usage, output: { total: 0, reasoning: 0 } } : usage;
    const priced = priceUsage(billed, cand.price);
    const before = charges.reduce((sum, c) => sum + (c.exact ?? 0n), 0n);
    const cost = roundUpToNanos(before + priced.exact) - roundUpToNanos(before);
    // A fast variant served by provider options has its own configured price.
    const priceSource = cand.price === cand.deployment.price ? cand.deployment.priceSource : 'config (fast variant)';
    charges.push({ model: cand.model.id, usage, cost, exact: priced.exact, priced, deployment: cand.deployment.id, ...(priceSource ? { priceSource } : {}) });
  }
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

/** The attempt as reported: its model, and its deployment when the model has several. */
function attemptRecord(cand: Candidate, outcome: AttemptOutcome): Attempt {
  const where = { model: cand.model.id, ...(cand.model.deployments.length > 1 ? { deployment: cand.deployment.id } : {}) };
  if (outcome.kind === 'finished') {
    return outcome.finish.unified === 'refusal' ? { ...where, outcome: 'refusal', reason: refusalReason(outcome) } : { ...where, outcome: 'ok' };
  }
  if (outcome.kind === 'cancelled') return { ...where, outcome: 'error', reason: 'client disconnected' };
  return { ...where, outcome: outcome.error.code === 'content_filter' ? 'refusal' : 'error', reason: outcome.error.message };
}

async function settle(deps: PipelineDeps, ctx: CallContext, req: Request, summary: RunSummary, charges: Charge[], latencyMs: number) {
  summary.usage = charges.reduce((acc, c) => addUsage(acc, c.usage), emptyUsage());
  summary.cost = charges.reduce((acc, c) => acc + c.cost, 0n);
  recordMetrics(summary, charges);
  // The key's token bucket took the input estimate at admission; now it gets what was really used.
  if (summary.rateLimit) deps.limiter.adjust(limitsOwner(ctx), ctx.limits, { tokens: inputTotal(summary.usage) + summary.usage.output.total - summary.inputTokens });
  const record = {
    keyId: ctx.keyId ?? null,
    userId: ctx.userId ?? null,
    modelRequested: req.model,
    endUser: req.attribution?.endUser ?? null,
    session: req.attribution?.session ?? null,
    modelServed: summary.servedModel ?? null,
    attempts: summary.attempts,
    latencyMs,
    status: summary.status ?? 'error',
  };
  const span = ctx.trace?.child('switchyard.ledger.settle', settleAttributes(summary));
  try {
    await deps.ledger.settle({ requestId: ctx.requestId, charges, record });
    span?.end();
    // Delivered to the operator's pipeline once the ledger has it (never before the commit).
    ctx.trace?.usage({ ...record, requestId: ctx.requestId, accountId: ctx.accountId, userId: ctx.userId ?? null, ...usageFacts(summary) });
  } catch (e) {
    span?.fail('settle_failed', (e as Error)?.message);
    span?.end();
    // The ledger retries a settle the database did not take and spools it at shutdown; what
    // arrives here was refused (a caller bug) or spooled, and is logged as such by the ledger too.
    deps.log.error({ err: e, requestId: ctx.requestId }, 'settlement failed');
  }
}

/** Whose rate-limit buckets a request draws on: its key's, or its user's (ids never collide: key_…, usr_…). */
function limitsOwner(ctx: CallContext): string {
  return ctx.keyId ?? ctx.userId ?? ctx.accountId;
}

/** The settle span's attributes: what the request is billed, in the conventions' token names. */
function settleAttributes(summary: RunSummary) {
  const t = tokenCounts(summary.usage!);
  return {
    'gen_ai.usage.input_tokens': t.input,
    'gen_ai.usage.output_tokens': t.output,
    'gen_ai.usage.cache_read.input_tokens': t.cacheRead,
    'gen_ai.usage.cache_creation.input_tokens': t.cacheWrite,
    'switchyard.cost.nanodollars': Number(summary.cost),
    'switchyard.attempts': summary.attempts.length,
  };
}

/** The usage export's facts of a settled run. */
function usageFacts(summary: RunSummary) {
  return {
    deployments: summary.attempts.map((a) => a.deployment ?? a.model),
    attempts: summary.attempts.length,
    fallback: summary.attempts.some((a) => a.model !== summary.attempts[0].model),
    usage: tokenCounts(summary.usage!),
    cost: summary.cost.toString(),
  };
}
