/**
 * The completion pipeline's entry: route, count, admit (rate limits), hold, then run the attempts
 * (attempt-loop.ts) and settle what they cost (bill-run.ts). Each attempt is launched by
 * launch-attempt.ts and judged by attempt-verdict.ts.
 */
import { GatewayError, isGatewayError, type Request, type StreamEvent } from '../ir/index.js';
import { DatabaseDeadline, requestHold, REQUEST_DB_WAIT_MS } from '../ledger/index.js';
import { affinityKey, holdCandidate, planRoute, type Candidate } from '../routing/index.js';
import { capabilitiesOf } from '../providers/capabilities.js';
import { withinDeadline } from '../util/deadline.js';
import * as metrics from '../util/metrics.js';
import { countRequestTokensAsync } from '../util/tokenizer.js';
import type { CallContext, PipelineDeps, RunSummary } from './types.js';
import { rateLimitError, limitsOwner } from './limit-refusal.js';
import { launchAttempt } from './launch-attempt.js';
import type { Hops, AttemptsRun } from './run-state.js';
import { streamAttempts, collectAttempts } from './attempt-loop.js';
import { pickFor, attemptRecord } from './attempt-verdict.js';
import { chargeAttempt, holdHeartbeat, settle } from './bill-run.js';

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
