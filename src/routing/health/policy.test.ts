import { describe, expect, it } from 'vitest';
import type { Catalog, ModelEntry } from '../catalog.js';
import { catalogPolicy, countsAgainst, DEFAULT_HEALTH_POLICY, retryAfterCooldown } from './policy.js';

const catalog = (cooldowns: Record<string, number | undefined>): Catalog => ({
  providers: new Map(),
  aliases: new Map(),
  models: new Map(Object.entries(cooldowns).map(([id, cooldownMs]) => [id, { id, routing: { strategy: 'weighted', sessionAffinity: true, cooldownMs } } as ModelEntry])),
});

describe('catalogPolicy', () => {
  it("reads the deployment's model's cooldown in the catalog in use, the default otherwise", () => {
    let current = catalog({ 'org/claude': 10_000, gpt: undefined });
    const policyFor = catalogPolicy(() => current);
    expect(policyFor('org/claude/0').cooldownMs).toBe(10_000); // a model id with a slash
    expect(policyFor('gpt/primary')).toEqual(DEFAULT_HEALTH_POLICY);
    expect(policyFor('gone/0')).toEqual(DEFAULT_HEALTH_POLICY);
    current = catalog({ 'org/claude': 600_000 }); // a reload applies at once
    expect(policyFor('org/claude/0')).toMatchObject({ cooldownMs: 600_000, maxCooldownMs: 600_000 });
  });
});

describe('what counts', () => {
  it('timeouts, connection errors, 408, 429 and 5xx count; other 4xx do not', () => {
    for (const status of [undefined, 408, 429, 500, 502, 503, 504, 529]) expect(countsAgainst({ status }), String(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 413, 422]) expect(countsAgainst({ status }), String(status)).toBe(false);
  });

  it('a retry-after cools down on 429, 503 and 529 only', () => {
    expect(retryAfterCooldown({ status: 429, retryAfterMs: 12_000 }, DEFAULT_HEALTH_POLICY)).toBe(12_000);
    expect(retryAfterCooldown({ status: 529, retryAfterMs: 0 }, DEFAULT_HEALTH_POLICY)).toBe(DEFAULT_HEALTH_POLICY.minRetryAfterCooldownMs);
    expect(retryAfterCooldown({ status: 500, retryAfterMs: 12_000 }, DEFAULT_HEALTH_POLICY)).toBeUndefined();
    expect(retryAfterCooldown({ status: 429 }, DEFAULT_HEALTH_POLICY)).toBeUndefined();
  });
});
