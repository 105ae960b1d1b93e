/** The console's per-day chart rows. */
import { describe, expect, it } from 'vitest';
import { everyDay } from './spend-days.js';

describe('everyDay', () => {
  const now = Date.UTC(2026, 10, 28, 15);
  const row = (group: string, cost: number) => ({ group, requests: 1, input_tokens: 1, output_tokens: 1, cached_tokens: 0, cost });

  it('one day of spend is one bar among the range, the other days at zero, in calendar order', () => {
    const rows = everyDay([row('2026-11-28', 5)], 30, now);
    expect(rows).toHaveLength(30);
    expect(rows[0]!.group).toBe('2026-10-30');
    expect(rows.at(-1)).toMatchObject({ group: '2026-11-28', cost: 5 });
    expect(rows.filter((r) => r.cost > 0)).toHaveLength(1);
  });

  it('ninety days keep every day with spend, in order', () => {
    const rows = everyDay([row('2026-09-01', 1), row('2026-11-01', 2)], 90, now);
    expect(rows).toHaveLength(90);
    expect(rows.filter((r) => r.cost > 0).map((r) => r.group)).toEqual(['2026-09-01', '2026-11-01']);
  });
});
