import { describe, expect, it } from 'vitest';
import { LocalDeploymentHealth } from './local-health.js';
import { DEFAULT_HEALTH_POLICY, type HealthPolicy } from './policy.js';

const D = 'claude/anthropic';

/** A store on a clock the test moves, with the cooldowns it announces. */
function store(policy: Partial<HealthPolicy> = {}) {
  const clock = { t: 1_000_000 };
  const announced: Array<{ id: string; remainingMs: number; durationMs: number }> = [];
  const recovered: string[] = [];
  const h = new LocalDeploymentHealth({
    now: () => clock.t,
    policyFor: () => ({ ...DEFAULT_HEALTH_POLICY, ...policy }),
    onCooldown: (id, c) => announced.push({ id, ...c }),
    onRecovered: (id) => recovered.push(id),
  });
  const state = () => h.snapshot(clock.t).find((d) => d.id === D);
  return { h, clock, announced, recovered, state };
}

describe('cooldowns', () => {
  it('a 529 with retry-after cools the deployment for max(retry-after, the minimum)', () => {
    const { h, clock, announced, state } = store();
    h.recordFailure(D, { status: 529, retryAfterMs: 1_000 }, clock.t);
    expect(h.available(D, clock.t)).toBe(false);
    expect(state()).toMatchObject({ state: 'cooling_down', cooldownUntil: clock.t + 5_000 });
    expect(announced).toEqual([{ id: D, remainingMs: 5_000, durationMs: 5_000 }]);
    h.recordFailure('other', { status: 429, retryAfterMs: 20_000 }, clock.t);
    expect(h.snapshot(clock.t).find((d) => d.id === 'other')).toMatchObject({ cooldownUntil: clock.t + 20_000 });
    clock.t += 4_999;
    expect(h.available(D, clock.t)).toBe(false);
    clock.t += 1;
    expect(h.available(D, clock.t)).toBe(true);
    expect(state()!.state).toBe('probing');
  });

  it('three failures in a row cool it down for the policy cooldown; a success between resets the count', () => {
    const { h, clock, state } = store({ cooldownMs: 10_000 });
    h.recordFailure(D, { status: 500 }, clock.t);
    h.recordFailure(D, {}, clock.t); // timeout or connection error
    h.recordSuccess(D, 100, clock.t);
    h.recordFailure(D, { status: 503 }, clock.t);
    h.recordFailure(D, { status: 408 }, clock.t);
    expect(h.available(D, clock.t)).toBe(true);
    h.recordFailure(D, { status: 429 }, clock.t); // no retry-after: an ordinary failure
    expect(state()).toMatchObject({ state: 'cooling_down', cooldownUntil: clock.t + 10_000 });
  });

  it("other 4xx are the client's fault and never count", () => {
    const { h, clock, state } = store();
    for (const status of [400, 401, 404, 413, 422, 400, 400]) h.recordFailure(D, { status }, clock.t);
    expect(h.available(D, clock.t)).toBe(true);
    expect(state()).toBeUndefined(); // nothing recorded: the deployment is not even known
  });

  it('an error rate at or over the threshold with enough calls cools it down, even without failures in a row', () => {
    const { h, clock, state } = store({ minCalls: 10, errorRate: 0.5 });
    for (let i = 0; i < 4; i++) {
      h.recordSuccess(D, 50, clock.t);
      h.recordFailure(D, { status: 502 }, clock.t);
    }
    expect(h.available(D, clock.t)).toBe(true); // 8 calls: under the minimum
    h.recordSuccess(D, 50, clock.t);
    expect(state()!.errorRate).toBeCloseTo(4 / 9);
    h.recordFailure(D, { status: 502 }, clock.t); // 5 of 10
    expect(state()!.state).toBe('cooling_down');
  });

  it('old calls leave the error-rate window', () => {
    const { h, clock, state } = store({ windowMs: 60_000 });
    h.recordFailure(D, { status: 500 }, clock.t);
    h.recordSuccess(D, 50, clock.t);
    expect(state()!.errorRate).toBe(0.5);
    clock.t += 61_000;
    h.recordSuccess(D, 50, clock.t);
    expect(state()!.errorRate).toBe(0);
  });
});

describe('probing back', () => {
  it('lets one call through per instance once the cooldown ends; its success makes the deployment healthy', () => {
    const { h, clock, recovered, state } = store({ cooldownMs: 10_000 });
    for (let i = 0; i < 3; i++) h.recordFailure(D, { status: 500 }, clock.t);
    clock.t += 10_000;
    expect(h.available(D, clock.t)).toBe(true);
    const end = h.begin(D);
    expect(h.available(D, clock.t)).toBe(false); // the probe is out
    expect(h.inFlight(D)).toBe(1);
    h.recordSuccess(D, 120, clock.t);
    end();
    expect(state()).toMatchObject({ state: 'healthy', errorRate: 0, inFlight: 0 });
    expect(state()!.cooldownUntil).toBeUndefined();
    expect(recovered).toEqual([D]);
    // Healthy: any number of calls.
    h.begin(D);
    expect(h.available(D, clock.t)).toBe(true);
  });

  it('a probe that ends without an outcome (the client left) frees the slot for another probe', () => {
    const { h, clock } = store({ cooldownMs: 10_000 });
    for (let i = 0; i < 3; i++) h.recordFailure(D, {}, clock.t);
    clock.t += 10_000;
    const end = h.begin(D);
    expect(h.available(D, clock.t)).toBe(false);
    end();
    end(); // ending twice is harmless
    expect(h.inFlight(D)).toBe(0);
    expect(h.available(D, clock.t)).toBe(true);
  });

  it('a failed probe cools down again for twice as long, capped', () => {
    const { h, clock, announced, state } = store({ cooldownMs: 10_000, maxCooldownMs: 35_000 });
    for (let i = 0; i < 3; i++) h.recordFailure(D, { status: 500 }, clock.t);
    const lengths = [10_000];
    for (let i = 0; i < 3; i++) {
      clock.t = state()!.cooldownUntil!;
      const end = h.begin(D);
      h.recordFailure(D, { status: 500 }, clock.t);
      end();
      lengths.push(state()!.cooldownUntil! - clock.t);
    }
    expect(lengths).toEqual([10_000, 20_000, 35_000, 35_000]);
    expect(announced.map((a) => a.durationMs)).toEqual(lengths);
    // A success after all that starts again from the policy's cooldown.
    clock.t = state()!.cooldownUntil!;
    h.recordSuccess(D, 10, clock.t);
    for (let i = 0; i < 3; i++) h.recordFailure(D, { status: 500 }, clock.t);
    expect(state()!.cooldownUntil! - clock.t).toBe(10_000);
  });

  it('a failed probe waits at least what the deployment asked for', () => {
    const { h, clock, state } = store({ cooldownMs: 1_000 });
    h.recordFailure(D, { status: 529, retryAfterMs: 1_000 }, clock.t);
    clock.t = state()!.cooldownUntil!;
    h.recordFailure(D, { status: 529, retryAfterMs: 60_000 }, clock.t);
    expect(state()!.cooldownUntil! - clock.t).toBe(60_000);
  });

  it('calls that started before the cooldown and end within it change nothing but a longer retry-after', () => {
    const { h, clock, state } = store({ minRetryAfterCooldownMs: 1_000 });
    h.recordFailure(D, { status: 529, retryAfterMs: 5_000 }, clock.t);
    const until = state()!.cooldownUntil!;
    h.recordSuccess(D, 80, clock.t + 1);
    h.recordFailure(D, { status: 500 }, clock.t + 1);
    h.recordFailure(D, { status: 529, retryAfterMs: 1_000 }, clock.t + 1);
    expect(state()!.cooldownUntil).toBe(until);
    h.recordFailure(D, { status: 429, retryAfterMs: 30_000 }, clock.t + 2);
    expect(state()!.cooldownUntil).toBe(clock.t + 2 + 30_000);
  });
});

describe('other instances', () => {
  it('a cooldown announced elsewhere applies at once and never shortens a longer one; a recovery clears it', () => {
    const { h, clock, announced, state } = store();
    h.applyCooldown(D, { remainingMs: 7_000, durationMs: 7_000 });
    expect(h.available(D, clock.t)).toBe(false);
    expect(state()!.cooldownUntil).toBe(clock.t + 7_000);
    h.applyCooldown(D, { remainingMs: 1_000, durationMs: 1_000 });
    expect(state()!.cooldownUntil).toBe(clock.t + 7_000);
    expect(announced).toEqual([]); // applied, not announced again
    expect(h.cooldowns(clock.t)).toEqual([{ id: D, remainingMs: 7_000, durationMs: 7_000 }]);
    h.applyRecovery(D);
    expect(h.available(D, clock.t)).toBe(true);
    expect(state()!.state).toBe('healthy');
  });
});

describe('latency and in-flight', () => {
  it('latency is an exponentially weighted moving average of successful calls', () => {
    const { h, clock } = store({ latencyAlpha: 0.5 });
    expect(h.latencyMs(D)).toBeUndefined();
    h.recordSuccess(D, 100, clock.t);
    expect(h.latencyMs(D)).toBe(100);
    h.recordSuccess(D, 200, clock.t);
    expect(h.latencyMs(D)).toBe(150);
    h.recordSuccess(D, 50, clock.t);
    expect(h.latencyMs(D)).toBe(100);
    h.recordFailure(D, { status: 500 }, clock.t);
    expect(h.latencyMs(D)).toBe(100);
  });

  it('counts calls in flight until each ends', () => {
    const { h } = store();
    const a = h.begin(D);
    const b = h.begin(D);
    expect(h.inFlight(D)).toBe(2);
    a();
    expect(h.inFlight(D)).toBe(1);
    b();
    expect(h.inFlight(D)).toBe(0);
    expect(h.inFlight('unknown')).toBe(0);
  });
});
