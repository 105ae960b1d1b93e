import { createHash } from 'node:crypto';
import { MONEY_UNIT, unitsAsNanosText, type UsageRecord } from '../ledger/index.js';

/** The event type of a usage webhook (Standard Webhooks' payload `type`). */
export const USAGE_EVENT_TYPE = 'usage.records';

/** One POST: its Standard Webhooks message id and its body, the same on every retry. */
export interface WebhookMessage {
  id: string;
  body: string;
}

/**
 * A batch of usage records as one webhook message: `{type, timestamp, data: {records}}`, the
 * Standard Webhooks payload shape, `timestamp` being the newest record's time. The id is derived
 * from the records' request ids, so the same batch has the same `webhook-id` on every retry, and
 * on another instance or after a restart too when it reads the same records.
 */
export function usageBatchMessage(records: UsageRecord[]): WebhookMessage {
  if (records.length === 0) throw new RangeError('a usage webhook carries at least one record');
  const digest = createHash('sha256').update(records.map((r) => r.requestId).join('\n')).digest('base64url');
  const body = JSON.stringify({ type: USAGE_EVENT_TYPE, timestamp: records.at(-1)!.createdAt.toISOString(), data: { records: records.map(usageRecordJson) } });
  return { id: `msg_${digest.slice(0, 32)}`, body };
}

/**
 * A usage record as the webhook sends it: the fields of `GET /admin/accounts/{id}/usage` with the
 * key and deployments beside them, and money as exact decimal strings of nanodollars (JSON
 * numbers are exact only below 2^53). Token counts are safe integers (the ledger refuses others).
 */
export function usageRecordJson(r: UsageRecord) {
  return {
    request_id: r.requestId,
    account_id: r.accountId,
    key_id: r.keyId ?? null,
    user_id: r.userId ?? null,
    end_user: r.endUser ?? null,
    session: r.session ?? null,
    model_requested: r.modelRequested,
    model_served: r.modelServed ?? null,
    deployments: deploymentsOf(r.attempts),
    status: r.status,
    attempts: r.attempts,
    input_tokens: Number(r.tokens.inputNoCache),
    output_tokens: Number(r.tokens.output),
    cache_read_tokens: Number(r.tokens.inputCacheRead),
    cache_write_tokens: Number(r.tokens.inputCacheWrite),
    reasoning_tokens: Number(r.tokens.reasoning),
    cost: r.cost.toString(),
    beyond_hold: r.beyondHold.toString(),
    unit: MONEY_UNIT,
    pricing:
      r.pricing?.map((p) => ({
        model: p.model,
        deployment: p.deployment,
        price_source: p.priceSource,
        service_tier: p.serviceTier,
        long_context_above: p.longContextAbove,
        lines: p.lines.map((l) => ({ kind: l.kind, count: l.count, rate: unitsAsNanosText(l.rate) })),
        cost: p.cost.toString(),
      })) ?? null,
    latency_ms: r.latencyMs,
    created_at: r.createdAt.toISOString(),
  };
}

/** Each attempt's deployment (its model when it named none), in the order they ran. */
function deploymentsOf(attempts: unknown[]): string[] {
  const out: string[] = [];
  for (const a of attempts) {
    if (!a || typeof a !== 'object') continue;
    const { deployment, model } = a as { deployment?: unknown; model?: unknown };
    const name = typeof deployment === 'string' ? deployment : typeof model === 'string' ? model : undefined;
    if (name !== undefined) out.push(name);
  }
  return out;
}
