import type { SpendRow } from './types.js';

const DAY_MS = 86_400_000;

/**
 * Per day, the chart shows every day of the range, those without spend at zero: one day of spend
 * is one bar among thirty, and the axis reads as the calendar.
 */
export function everyDay(rows: SpendRow[], days: number, now = Date.now()): SpendRow[] {
  const byDay = new Map(rows.map((r) => [r.group, r]));
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) => {
    const day = new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10);
    return byDay.get(day) ?? { group: day, requests: 0, input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost: 0 };
  });
}
