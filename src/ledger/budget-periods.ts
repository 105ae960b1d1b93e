/**
 * Budget periods computed in JavaScript, for the SQLite ledger (PostgreSQL computes them in SQL,
 * budgets.ts periodStart): where a day, a week (from Monday) or a month begins in an IANA time
 * zone, as an instant. The same rule as PostgreSQL's `date_trunc(p, at AT TIME ZONE z) AT TIME ZONE z`.
 */
import type { BudgetPeriod } from './schema.js';

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

/** The start of the period that `atMs` falls in. */
export function periodStartMs(period: BudgetPeriod, tz: string, atMs: number): number {
  if (period === 'lifetime') return LIFETIME_START_MS;
  const w = wallClock(atMs, tz);
  if (period === 'day') return zonedMidnight(w.y, w.m, w.d, tz);
  if (period === 'week') return zonedMidnight(w.y, w.m, w.d - w.weekday, tz);
  return zonedMidnight(w.y, w.m, 1, tz);
}

/** The start of the period after the one `atMs` falls in; null for lifetime. */
export function periodEndMs(period: BudgetPeriod, tz: string, atMs: number): number | null {
  if (period === 'lifetime') return null;
  const w = wallClock(atMs, tz);
  if (period === 'day') return zonedMidnight(w.y, w.m, w.d + 1, tz);
  if (period === 'week') return zonedMidnight(w.y, w.m, w.d - w.weekday + 7, tz);
  return zonedMidnight(w.y, w.m + 1, 1, tz);
}
