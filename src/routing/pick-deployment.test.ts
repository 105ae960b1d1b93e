import { describe, expect, it } from 'vitest';
import { makeRng } from '../providers/local/make-seed.js';
import type { ProviderConfig } from '../providers/types.js';
import type { Deployment, Routing } from './catalog.js';
import type { DeploymentState } from './health/types.js';
import { affinityKey, anotherAvailable, pickDeployment, rendezvous, type HealthReads } from './pick-deployment.js';

const PROVIDER = { id: 'p', type: 'openai' } as ProviderConfig;
const PRICE = { input: 1n, output: 1n, cacheRead: 0n, cacheWrite: 0n, cacheWrite1h: 0n };

function deployments(...weights: number[]): Deployment[] {
  return weights.map((weight, i) => ({ id: `m/${'abcdefgh'[i]}`, name: 'abcdefgh'[i], provider: PROVIDER, upstreamModel: 'u', weight, price: PRICE }));
}

/** A health double: what each deployment reports, set per test. */
function health(state: { down?: Record<string, number>; inFlight?: Record<string, number>; latency?: Record<string, number> } = {}): HealthReads {
  return {
    available: (id, now) => (state.down?.[id] ?? 0) <= now,
    inFlight: (id) => state.inFlight?.[id] ?? 0,
    latencyMs: (id) => state.latency?.[id],
    snapshot: () =>
      Object.entries(state.down ?? {}).map(([id, until]): DeploymentState => ({ id, state: 'cooling_down', errorRate: 1, inFlight: 0, cooldownUntil: until })),
  };
}

const weighted: Routing = { strategy: 'weighted', sessionAffinity: true };

function counts(n: number, pick: () => Deployment | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const d = pick()!;
    out[d.name] = (out[d.name] ?? 0) + 1;
  }
  return out;
}

describe('pickDeployment', () => {
  it('weighted: spreads by weight (seeded), skipping what is cooling down or already tried', () => {
    const ds = deployments(1, 2, 7);
    const random = makeRng(42);
    const spread = counts(10_000, () => pickDeployment({ deployments: ds, routing: weighted, health: health(), nowMs: 0, random }));
    expect(spread.a / 10_000).toBeCloseTo(0.1, 1);
    expect(spread.b / 10_000).toBeCloseTo(0.2, 1);
    expect(spread.c / 10_000).toBeCloseTo(0.7, 1);
    const cooling = counts(200, () => pickDeployment({ deployments: ds, routing: weighted, health: health({ down: { 'm/c': 1000 } }), nowMs: 0, random }));
    expect(cooling.c).toBeUndefined();
    expect(pickDeployment({ deployments: ds, routing: weighted, health: health(), nowMs: 0, random, tried: new Set(['m/a', 'm/c']) })?.name).toBe('b');
    expect(pickDeployment({ deployments: ds, routing: weighted, health: health(), nowMs: 0, random, tried: new Set(['m/a', 'm/b', 'm/c']) })).toBeUndefined();
  });

  it('none available: the one whose cooldown ends first, rather than none', () => {
    const ds = deployments(1, 1, 1);
    const down = { 'm/a': 5000, 'm/b': 2000, 'm/c': 9000 };
    expect(pickDeployment({ deployments: ds, routing: weighted, health: health({ down }), nowMs: 0, random: Math.random })?.name).toBe('b');
    expect(pickDeployment({ deployments: ds, routing: weighted, health: health({ down }), nowMs: 0, random: Math.random, tried: new Set(['m/b']) })?.name).toBe('a');
  });

  it('least_in_flight: the fewest calls running here', () => {
    const routing: Routing = { strategy: 'least_in_flight', sessionAffinity: true };
    const h = health({ inFlight: { 'm/a': 3, 'm/b': 1, 'm/c': 2 } });
    expect(counts(50, () => pickDeployment({ deployments: deployments(1, 1, 9), routing, health: h, nowMs: 0, random: makeRng(1) }))).toEqual({ b: 50 });
  });

  it('lowest_latency: an unmeasured deployment first, then the fastest', () => {
    const routing: Routing = { strategy: 'lowest_latency', sessionAffinity: true };
    const pick = (latency: Record<string, number>) => pickDeployment({ deployments: deployments(1, 1, 1), routing, health: health({ latency }), nowMs: 0, random: makeRng(3) })?.name;
    expect(pick({ 'm/a': 100, 'm/c': 50 })).toBe('b');
    expect(pick({ 'm/a': 100, 'm/b': 300, 'm/c': 50 })).toBe('c');
  });

  it('a session sticks to one deployment whatever the strategy, moves only when it is unavailable, and sessions spread by weight', () => {
    const ds = deployments(1, 2, 7);
    const routing: Routing = { strategy: 'least_in_flight', sessionAffinity: true };
    const home = pickDeployment({ deployments: ds, routing, health: health(), nowMs: 0, random: Math.random, session: 'sess-1' })!;
    for (let i = 0; i < 20; i++) {
      const inFlight = { [home.id]: 10 };
      expect(pickDeployment({ deployments: ds, routing, health: health({ inFlight }), nowMs: 0, random: Math.random, session: 'sess-1' })).toBe(home);
    }
    const moved = pickDeployment({ deployments: ds, routing, health: health({ down: { [home.id]: 1000 } }), nowMs: 0, random: Math.random, session: 'sess-1' })!;
    expect(moved.id).not.toBe(home.id);
    // Only the sessions on the unavailable deployment move.
    for (let s = 0; s < 200; s++) {
      const before = rendezvous(ds, `s${s}`);
      const after = rendezvous(ds.filter((d) => d.id !== 'm/a'), `s${s}`);
      if (before.id !== 'm/a') expect(after).toBe(before);
    }
    const spread = counts(3000, (() => {
      let s = 0;
      return () => rendezvous(ds, `session-${s++}`);
    })());
    expect(spread.c / 3000).toBeCloseTo(0.7, 1);
    expect(spread.a / 3000).toBeCloseTo(0.1, 1);
    // Without affinity the strategy decides.
    const off: Routing = { strategy: 'least_in_flight', sessionAffinity: false };
    const h = health({ inFlight: { 'm/a': 1, 'm/b': 1, 'm/c': 1, [home.id]: 5 } });
    expect(pickDeployment({ deployments: ds, routing: off, health: h, nowMs: 0, random: Math.random, session: 'sess-1' })?.id).not.toBe(home.id);
  });

  it('anotherAvailable: an untried, available deployment besides the current one', () => {
    const ds = deployments(1, 1);
    expect(anotherAvailable(ds, new Set(), 'm/a', health(), 0)).toBe(true);
    expect(anotherAvailable(ds, new Set(['m/b']), 'm/a', health(), 0)).toBe(false);
    expect(anotherAvailable(ds, new Set(), 'm/a', health({ down: { 'm/b': 10 } }), 0)).toBe(false);
  });
});

describe('affinityKey', () => {
  it('the session, else the end user, else none', () => {
    expect(affinityKey({ attribution: { session: 's', endUser: 'u' } })).toBe('s');
    expect(affinityKey({ attribution: { endUser: 'u' } })).toBe('u');
    expect(affinityKey({})).toBeUndefined();
  });
});
