/** Billing a run: each attempt's charge, the hold kept alive meanwhile, and the settle at the end. */
import { addUsage, emptyUsage, inputTotal, type Request } from '../ir/index.js';
import { priceUsage, roundUpToNanos, type Charge } from '../ledger/index.js';
import type { Candidate } from '../routing/index.js';
import * as metrics from '../util/metrics.js';
import { billableUsage, OutputMeter } from './meter-output.js';
import { tokenCounts } from './trace-attempt.js';
import type { CallContext, PipelineDeps, RunSummary } from './types.js';
import { limitsOwner } from './limit-refusal.js';

/**
 * Adds an attempt's charge: the upstream's usage where it reported it, else the tokenizer over
 * what was produced. An attempt that failed before producing anything costs nothing. When the
 * client never received the output (`outputUnseen`), the cost covers the input only; the usage,
 * output tokens included, is recorded as it was. The request's cost is its attempts' exact sum
 * rounded up once: each charge is what its attempt adds to that rounded sum.
 */
export function chargeAttempt(charges: Charge[], summary: RunSummary, cand: Candidate, meter: OutputMeter, failed: boolean, outputUnseen = false): void {
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
export function holdHeartbeat(deps: PipelineDeps, ctx: CallContext): () => void {
  const every = Math.max(50, Math.floor(deps.holdTtlMs / 3));
  const timer = setInterval(() => {
    deps.ledger.extendHold(ctx.requestId, deps.holdTtlMs).catch((err) => deps.log.warn({ err, requestId: ctx.requestId }, 'could not extend the hold'));
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}

export async function settle(deps: PipelineDeps, ctx: CallContext, req: Request, summary: RunSummary, charges: Charge[], latencyMs: number) {
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
