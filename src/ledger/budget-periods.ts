/**
 * Where a budget period begins and ends, defined once (PERIOD_RULES) for both ledgers: SQLite
 * computes it with the functions below; PostgreSQL's statements are built from the same table
 * (postgres/budgets.ts), and test/ledger/budget-periods.test.ts holds the two to the same instants.
 */
import type { BudgetPeriod } from './schema.js';

/**
 * What each calendar period is: the unit its start is truncated to on the key's wall clock (a week
 * begins on Monday, as in ISO 8601 and PostgreSQL's date_trunc) and its length on that clock. A
 * lifetime budget has one period, from LIFETIME_START_MS, that never ends.
 */
export const PERIOD_RULES: Readonly<Record<Exclude<BudgetPeriod, 'lifetime'>, { truncateTo: 'day' | 'week' | 'month'; length: { months: number; days: number } }>> = {
  day: { truncateTo: 'day', length: { months: 0, days: 1 } },
  week: { truncateTo: 'week', length: { months: 0, days: 7 } },
  month: { truncateTo: 'month', length: { months: 1, days: 0 } },
};

/** The usage row of a lifetime budget starts here: the earliest instant a Date can hold. */
export const LIFETIME_START_MS = -8_640_000_000_000_000;

const formats = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

function format(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23', weekday: 'short', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formats.set(tz, f);
  }
  return f;
}

/** Throws a RangeError for a time zone this runtime does not know. */
export function checkTimeZoneName(tz: string): void {
  format(tz);
}

interface Wall { y: number; m: number; d: number; hh: number; mm: number; ss: number; weekday: number }

function wallClock(ms: number, tz: string): Wall {
  const p: Record<string, string> = {};
  for (const part of format(tz).formatToParts(ms)) p[part.type] = part.value;
  return { y: Number(p.year), m: Number(p.month), d: Number(p.day), hh: Number(p.hour), mm: Number(p.minute), ss: Number(p.second), weekday: WEEKDAYS.indexOf(p.weekday) };
}

/** How far the zone's wall clock is ahead of UTC at `ms`. */
function offsetAt(ms: number, tz: string): number {
  const w = wallClock(ms, tz);
  return Date.UTC(w.y, w.m - 1, w.d, w.hh, w.mm, w.ss) - (ms - (((ms % 1000) + 1000) % 1000));
}

/** The instant the zone's wall clock reads midnight of y-m-d (month and day may overflow, as Date.UTC's). */
function zonedMidnight(y: number, m: number, d: number, tz: string): number {
  const local = Date.UTC(y, m - 1, d);
  const first = local - offsetAt(local, tz);
  const second = local - offsetAt(first, tz);
  return second;
}

/** The wall-clock date a period's start is truncated to. */
function truncated(w: Wall, unit: 'day' | 'week' | 'month'): { y: number; m: number; d: number } {
  if (unit === 'day') return { y: w.y, m: w.m, d: w.d };
  if (unit === 'week') return { y: w.y, m: w.m, d: w.d - w.weekday };
  return { y: w.y, m: w.m, d: 1 };
}

/** The start of the period that `atMs` falls in. */
export function periodStartMs(period: BudgetPeriod, tz: string, atMs: number): number {
  if (period === 'lifetime') return LIFETIME_START_MS;
  const start = truncated(wallClock(atMs, tz), PERIOD_RULES[period].truncateTo);
  return zonedMidnight(start.y, start.m, start.d, tz);
}

/** The start of the period after the one `atMs` falls in; null for lifetime. */
export function periodEndMs(period: BudgetPeriod, tz: string, atMs: number): number | null {
  if (period === 'lifetime') return null;
  const { truncateTo, length } = PERIOD_RULES[period];
  const start = truncated(wallClock(atMs, tz), truncateTo);
  return zonedMidnight(start.y, start.m + length.months, start.d + length.days, tz);
}
