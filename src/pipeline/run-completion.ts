import {
  addUsage,
  emptyUsage,
  GatewayError,
  toGatewayError,
  type Attempt,
  type Request,
  type StreamEvent,
} from '../ir/index.js';
import { costOf, holdAmount, type Charge } from '../ledger/index.js';
import { nextStep, planRoute, refusalReason, resolveReasoning, type AttemptOutcome, type Candidate } from '../routing/index.js';
import { countRequestTokens } from '../util/tokenizer.js';
import { billableUsage, closeOpenBlocks, OutputMeter } from './meter-output.js';
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
  const candidates = planRoute(deps.catalog, req);
  const inputTokens = countRequestTokens(req);
  const primary = candidates[0].model;
  if (inputTokens > primary.contextWindow) {
    throw new GatewayError(
      'invalid_request',
      `the prompt is ${inputTokens} tokens, more than the ${primary.contextWindow}-token context window of ${primary.id}`,
      { param: 'messages', code: 'context_length_exceeded' },
    );
  }
  // A hold is never zero (the ledger's CHECK), even for free models: one nanodollar.
  const worstCase = holdAmount(inputTokens, Math.max(...candidates.map((c) => c.maxTokens)), candidates.map((c) => c.price));
  const amount = worstCase > 0n ? worstCase : 1n;
  await deps.ledger.placeHold({ requestId: ctx.requestId, accountId: ctx.accountId, amount, ttlMs: deps.holdTtlMs });
  const summary: RunSummary = { attempts: [], inputTokens, cost: 0n };
  return { events: runAttempts(deps, ctx, req, candidates, summary), summary };
}


async function* runAttempts(
  deps: PipelineDeps,
  ctx: CallContext,
  req: Request,
  candidates: Candidate[],
  summary: RunSummary,
): AsyncGenerator<StreamEvent> {
  const started = deps.now();
  const charges: Charge[] = [];
  const pendingFallbacks: StreamEvent[] = [];
  let startSent = false;
  try {
    for (let i = 0; i < candidates.length; i++) {
      const cand = candidates[i];
      const meter = new OutputMeter(cand.maxTokens);
      const attemptAbort = new AbortController();
      const call = {
        request: { ...req, maxTokens: cand.maxTokens, reasoning: resolveReasoning(req.reasoning, cand.maxTokens, cand.model.capabilities.reasoning) },
        target: cand.target,
        requestId: ctx.requestId,
        signal: AbortSignal.any([ctx.signal, attemptAbort.signal]),
      };
      let start: StreamEvent = { type: 'start', id: ctx.requestId, model: cand.model.id };
      let outcome: AttemptOutcome;
      try {
        const provider = deps.providers[cand.target.provider.type];
        if (!provider) throw new GatewayError('api_error', `no provider adapter for type ${cand.target.provider.type}`);
        for await (const raw of provider.stream(call)) {
          if (raw.type === 'start') {
            start = { type: 'start', id: raw.id, model: cand.model.id, ...(raw.usage ? { usage: raw.usage } : {}) };
            continue;
          }
          if (raw.type === 'finish') {
            meter.finish = raw.finish;
            meter.usage = raw.usage;
            break;
          }
          const ev = withAttemptId(raw, i);
          if (!startSent) {
            startSent = true;
            summary.servedModel = cand.model.id;
            summary.servedVariant = cand.variant;
            yield start;
            yield* pendingFallbacks.splice(0);
          }
          const cut = yield* admitUnderCeiling(meter, ev);
          if (cut) {
            attemptAbort.abort();
            meter.finish = { unified: 'length', raw: 'gateway_max_tokens' };
            break;
          }
        }
        outcome = meter.finish
          ? { kind: 'finished', finish: meter.finish }
          : { kind: 'failed', error: new GatewayError('bad_gateway', 'the upstream stream ended without a finish'), emittedOutput: meter.emittedOutput };
      } catch (e) {
        outcome = ctx.signal.aborted ? { kind: 'cancelled' } : { kind: 'failed', error: toGatewayError(e), emittedOutput: meter.emittedOutput };
      }
      const usage = outcome.kind === 'failed' && !meter.emittedOutput && !meter.usage ? emptyUsage() : billableUsage(meter, summary.inputTokens);
      if (usage.output.total > 0 || usage.input.noCache + usage.input.cacheRead + usage.input.cacheWrite > 0) {
        charges.push({ model: cand.model.id, usage, cost: costOf(usage, cand.price) });
      }
      const step = nextStep(outcome, i + 1 < candidates.length, cand.model.fallbackOnUnavailable);
      summary.attempts.push(attemptRecord(cand, outcome, step));
      summary.servedModel = cand.model.id;
      summary.servedVariant = cand.variant;
      if (outcome.kind === 'cancelled') {
        summary.status = 'cancelled';
        return;
      }
      if (step === 'next') {
        const fallback: StreamEvent = { type: 'fallback', from: cand.model.id, to: candidates[i + 1].model.id, reason: refusalReason(outcome) };
        if (startSent) {
          yield* closeOpenBlocks(meter);
          yield fallback;
        } else pendingFallbacks.push(fallback);
        continue;
      }
      if (step === 'fail' && outcome.kind === 'failed') throw outcome.error;
      if (outcome.kind !== 'finished') throw new GatewayError('api_error', 'the run ended without an answer');
      if (!startSent) {
        startSent = true;
        yield start;
        yield* pendingFallbacks.splice(0);
      }
      yield* closeOpenBlocks(meter);
      summary.status = outcome.finish.unified === 'refusal' ? 'refused' : 'ok';
      yield { type: 'finish', finish: outcome.finish, usage: charges.reduce((acc, c) => addUsage(acc, c.usage), emptyUsage()) };
      return;
    }
  } catch (e) {
    summary.status = ctx.signal.aborted ? 'cancelled' : 'error';
    throw e;
  } finally {
    if (!summary.status) summary.status = 'cancelled';
    await settle(deps, ctx, req, summary, charges, deps.now() - started);
  }
}

/** Passes one event through the ceiling. Returns true when the gateway cut the attempt. */
async function* admitUnderCeiling(meter: OutputMeter, ev: StreamEvent): AsyncGenerator<StreamEvent, boolean> {
  if (ev.type !== 'text-delta' && ev.type !== 'reasoning-delta' && ev.type !== 'tool-delta') {
    meter.track(ev);
    yield ev;
    return false;
  }
  const piece = ev.type === 'tool-delta' ? ev.json : ev.text;
  const { text, reached } = meter.admit(ev.id, piece);
  if (text) yield ev.type === 'tool-delta' ? { ...ev, json: text } : { ...ev, text };
  if (!reached) return false;
  yield* closeOpenBlocks(meter);
  return true;
}

function withAttemptId(ev: StreamEvent, attempt: number): StreamEvent {
  return 'id' in ev && ev.type !== 'start' ? { ...ev, id: `${attempt}:${ev.id}` } : ev;
}

function attemptRecord(cand: Candidate, outcome: AttemptOutcome, step: string): Attempt {
  if (outcome.kind === 'finished') {
    return outcome.finish.unified === 'refusal' ? { model: cand.model.id, outcome: 'refusal', reason: refusalReason(outcome) } : { model: cand.model.id, outcome: 'ok' };
  }
  if (outcome.kind === 'cancelled') return { model: cand.model.id, outcome: 'error', reason: 'client disconnected' };
  return { model: cand.model.id, outcome: step === 'next' && outcome.error.code === 'content_filter' ? 'refusal' : 'error', reason: outcome.error.message };
}

async function settle(deps: PipelineDeps, ctx: CallContext, req: Request, summary: RunSummary, charges: Charge[], latencyMs: number) {
  summary.usage = charges.reduce((acc, c) => addUsage(acc, c.usage), emptyUsage());
  summary.cost = charges.reduce((acc, c) => acc + c.cost, 0n);
  try {
    await deps.ledger.settle({
      requestId: ctx.requestId,
      charges,
      record: {
        keyId: ctx.keyId,
        modelRequested: req.model,
        modelServed: summary.servedModel ?? null,
        attempts: summary.attempts,
        latencyMs,
        status: summary.status ?? 'error',
      },
    });
  } catch (e) {
    // The hold stays pending and the reaper releases it after its TTL: the caller is not charged.
    deps.log.error({ err: e, requestId: ctx.requestId }, 'settlement failed');
  }
}
