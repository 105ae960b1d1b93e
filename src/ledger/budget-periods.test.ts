import { describe, expect, it } from 'vitest';
import { LIFETIME_START_MS, periodEndMs, periodStartMs } from './budget-periods.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('budget periods in a time zone (the SQLite ledger computes them in JavaScript)', () => {
  it('a day, a week from Monday and a month begin at local midnight, across a DST change', () => {
    // Paris moves from UTC+1 to UTC+2 at 01:00 UTC on Sunday 29 March 2026.
    const t = at('2026-03-29T12:00:00Z');
    expect(iso(periodStartMs('day', 'Europe/Paris', t))).toBe('2026-03-28T23:00:00.000Z');
    expect(iso(periodEndMs('day', 'Europe/Paris', t))).toBe('2026-03-29T22:00:00.000Z');
    expect(iso(periodStartMs('week', 'Europe/Paris', t))).toBe('2026-03-22T23:00:00.000Z');
    expect(iso(periodEndMs('week', 'Europe/Paris', t))).toBe('2026-03-29T22:00:00.000Z');
    expect(iso(periodStartMs('month', 'Europe/Paris', t))).toBe('2026-02-28T23:00:00.000Z');
    expect(iso(periodEndMs('month', 'Europe/Paris', t))).toBe('2026-03-31T22:00:00.000Z');
    // New York moves from UTC-4 to UTC-5 at 06:00 UTC on Sunday 1 November 2026.
    const n = at('2026-11-01T12:00:00Z');
    expect(iso(periodStartMs('day', 'America/New_York', n))).toBe('2026-11-01T04:00:00.000Z');
    expect(iso(periodEndMs('day', 'America/New_York', n))).toBe('2026-11-02T05:00:00.000Z');
    expect(iso(periodStartMs('month', 'America/New_York', at('2026-12-31T23:30:00Z')))).toBe('2026-12-01T05:00:00.000Z');
    expect(iso(periodEndMs('month', 'America/New_York', at('2026-12-31T23:30:00Z')))).toBe('2027-01-01T05:00:00.000Z');
  });

  it('the local date decides: late evening UTC is already tomorrow in Kolkata', () => {
    const t = at('2026-06-30T20:00:00Z');
    expect(iso(periodStartMs('day', 'Asia/Kolkata', t))).toBe('2026-06-30T18:30:00.000Z');
    expect(iso(periodStartMs('month', 'Asia/Kolkata', t))).toBe('2026-06-30T18:30:00.000Z');
    expect(iso(periodStartMs('day', 'UTC', t))).toBe('2026-06-30T00:00:00.000Z');
  });

  it('a lifetime budget has one period that never ends', () => {
    expect(periodStartMs('lifetime', 'UTC', Date.now())).toBe(LIFETIME_START_MS);
    expect(periodEndMs('lifetime', 'UTC', Date.now())).toBeNull();
  });
});
