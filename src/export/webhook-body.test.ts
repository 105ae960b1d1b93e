import { describe, expect, it } from 'vitest';
import type { UsageRecord } from '../ledger/index.js';
import { USAGE_EVENT_TYPE, usageBatchMessage } from './webhook-body.js';

const record = (requestId: string, extra: Partial<UsageRecord> = {}): UsageRecord => ({
  requestId,
  accountId: 'acct_1',
  keyId: 'key_1',
  userId: null,
  endUser: 'u-42',
  session: 's-1',
  modelRequested: 'big',
  modelServed: 'small',
  attempts: [{ model: 'big', deployment: 'big/east', outcome: 'error' }, { model: 'small', outcome: 'ok' }, 'junk'],
  latencyMs: 12,
  status: 'ok',
  tokens: { inputNoCache: 10n, inputCacheRead: 2n, inputCacheWrite: 1n, output: 7n, reasoning: 3n },
  cost: 9_007_199_254_740_993n,
  beyondHold: 0n,
  pricing: [{ model: 'small', deployment: 'small/a', priceSource: 'config', serviceTier: null, longContextAbove: null, lines: [{ kind: 'input', count: 10, rate: 37_500_000n }], exact: 375_000_000n, cost: 375n }],
  createdAt: new Date('2026-12-04T10:00:00.123Z'),
  ...extra,
});

describe('usage webhook body', () => {
  it('is the Standard Webhooks payload shape with every record, money exact as strings', () => {
    const m = usageBatchMessage([record('req_a'), record('req_b', { createdAt: new Date('2026-12-04T10:00:01Z'), pricing: null })]);
    const body = JSON.parse(m.body);
    expect(body).toMatchObject({ type: USAGE_EVENT_TYPE, timestamp: '2026-12-04T10:00:01.000Z' });
    expect(body.data.records.map((r: { request_id: string }) => r.request_id)).toEqual(['req_a', 'req_b']);
    expect(body.data.records[0]).toEqual({
      request_id: 'req_a',
      account_id: 'acct_1',
      key_id: 'key_1',
      user_id: null,
      end_user: 'u-42',
      session: 's-1',
      model_requested: 'big',
      model_served: 'small',
      deployments: ['big/east', 'small'],
      status: 'ok',
      attempts: [{ model: 'big', deployment: 'big/east', outcome: 'error' }, { model: 'small', outcome: 'ok' }, 'junk'],
      input_tokens: 10,
      output_tokens: 7,
      cache_read_tokens: 2,
      cache_write_tokens: 1,
      reasoning_tokens: 3,
      cost: '9007199254740993',
      beyond_hold: '0',
      unit: 'nanodollars',
      pricing: [{ model: 'small', deployment: 'small/a', price_source: 'config', service_tier: null, long_context_above: null, lines: [{ kind: 'input', count: 10, rate: '37.5' }], cost: '375' }],
      latency_ms: 12,
      created_at: '2026-12-04T10:00:00.123Z',
    });
    expect(body.data.records[1].pricing).toBeNull();
  });

  it('has the same id for the same records, another for others, and no dot in it (it is signed as id.timestamp.body)', () => {
    const a = usageBatchMessage([record('req_a'), record('req_b')]);
    expect(usageBatchMessage([record('req_a'), record('req_b')])).toEqual(a);
    expect(usageBatchMessage([record('req_a')]).id).not.toBe(a.id);
    expect(usageBatchMessage([record('req_b'), record('req_a')]).id).not.toBe(a.id);
    expect(a.id).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
  });

  it('never carries an empty batch', () => {
    expect(() => usageBatchMessage([])).toThrow(RangeError);
  });
});
