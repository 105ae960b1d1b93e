import { describe, expect, it } from 'vitest';
import { ByteBudget } from './byte-budget.js';

describe('ByteBudget', () => {
  it('grants within capacity, queues the bodies of one owner in order, and refuses after the wait', async () => {
    const budget = new ByteBudget(100, 100);
    const a = await budget.reserve(60, 1000, 'k');
    expect(a).toBeDefined();
    const order: string[] = [];
    const b = budget.reserve(50, 5000, 'k').then((r) => (order.push('b'), r));
    const c = budget.reserve(10, 5000, 'k').then((r) => (order.push('c'), r));
    await new Promise((r) => setTimeout(r, 20));
    // c would fit, but waits behind b: arrival order per owner, so its large bodies are not starved.
    expect(order).toEqual([]);
    a!();
    const [rb, rc] = await Promise.all([b, c]);
    expect(order).toEqual(['b', 'c']);
    expect(await budget.reserve(50, 10, 'k')).toBeUndefined();
    rb!();
    rc!();
    expect(await budget.reserve(100, 10, 'k')).toBeDefined();
  });

  it('holds one owner to its share beyond its first body, and never makes another owner wait for it', async () => {
    const budget = new ByteBudget(64, 16);
    const first = await budget.reserve(32, 10, 'slow');
    expect(first).toBeDefined();
    // The same owner's second large body waits (its share is spent), then is refused.
    const second = budget.reserve(32, 50, 'slow');
    // Another owner is served at once, though it arrived later.
    expect(await budget.reserve(8, 10, 'other')).toBeDefined();
    expect(await budget.reserve(8, 10, 'third')).toBeDefined();
    expect(await second).toBeUndefined();
    first!();
  });

  it('lets a body larger than the budget run alone', async () => {
    const budget = new ByteBudget(100);
    const release = await budget.reserve(1_000, 10);
    expect(release).toBeDefined();
    expect(await budget.reserve(1, 10)).toBeUndefined();
    release!();
    release!();
    expect(await budget.reserve(100, 10)).toBeDefined();
  });
});
