import { describe, expect, it } from 'vitest';
import { ByteBudget } from './byte-budget.js';

describe('ByteBudget', () => {
  it('grants within capacity, queues beyond it in order, and refuses after the wait', async () => {
    const budget = new ByteBudget(100);
    const a = await budget.reserve(60, 1000);
    expect(a).toBeDefined();
    const order: string[] = [];
    const b = budget.reserve(50, 5000).then((r) => (order.push('b'), r));
    const c = budget.reserve(10, 5000).then((r) => (order.push('c'), r));
    await new Promise((r) => setTimeout(r, 20));
    // c would fit, but waits behind b: arrival order, so large bodies are not starved.
    expect(order).toEqual([]);
    a!();
    const [rb, rc] = await Promise.all([b, c]);
    expect(order).toEqual(['b', 'c']);
    expect(await budget.reserve(50, 10)).toBeUndefined();
    rb!();
    rc!();
    expect(await budget.reserve(100, 10)).toBeDefined();
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
