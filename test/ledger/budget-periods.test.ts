/**
 * Budget periods are defined once (src/ledger/budget-periods.ts, PERIOD_RULES): SQLite computes
 * them in JavaScript, PostgreSQL in the SQL built from the same table (src/ledger/postgres/budgets.ts).
 * This holds the two to the same instants on PGlite and, with TEST_DATABASE_URL, PostgreSQL: every
 * period in zones with daylight saving (a 30-minute one too), half-hour and fractional offsets,
 * at DST changes, month and year ends and a leap day.
 */
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { periodEndMs, periodStartMs, PERIOD_RULES } from '../../src/ledger/budget-periods.js';
import { periodEnd, periodStart } from '../../src/ledger/postgres/budgets.js';
import type { BudgetPeriod } from '../../src/ledger/schema.js';
import { PG_URL } from './db-targets.js';

const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns', 'Asia/Kathmandu'];
const INSTANTS = [
  '2026-03-29T00:59:59Z', '2026-03-29T01:00:00Z', '2026-03-29T12:00:00Z', // Paris springs forward
  '2026-11-01T05:59:59Z', '2026-11-01T06:00:00Z', '2026-11-01T12:00:00Z', // New York falls back
  '2026-04-04T15:00:00Z', '2026-10-03T15:30:00Z', // Lord Howe's half-hour changes
  '2028-02-29T12:00:00Z', '2028-02-28T23:30:00Z', // a leap day
  '2026-12-31T23:30:00Z', '2027-01-01T00:30:00Z', '2026-06-30T20:00:00Z', '2026-01-04T23:59:59Z', '2026-01-05T00:00:00Z',
];
const PERIODS = [...Object.keys(PERIOD_RULES), 'lifetime'] as BudgetPeriod[];

const targets: Array<{ name: string; open: () => Promise<Kysely<any>> }> = [
  { name: 'pglite', open: async () => new Kysely<any>({ dialect: new (await import('../../src/ledger/postgres/pglite-dialect.js')).PGliteDialect(new PGlite()) }) },
  ...(PG_URL ? [{ name: 'postgres', open: async () => new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: PG_URL, max: 1 }) }) }) }] : []),
];

const opened: Array<Kysely<any>> = [];
afterAll(async () => {
  for (const db of opened) await db.destroy();
});

describe.each(targets)('budget periods on $name are the JavaScript ones', ({ open }) => {
  it('for every period, zone and instant: the same start and the same end', async () => {
    const db = await open();
    opened.push(db);
    const ats = INSTANTS.map((iso) => Date.parse(iso));
    const mismatches: string[] = [];
    for (const tz of ZONES) {
      for (const period of PERIODS) {
        const at = sql`t.at`;
        const { rows } = await sql<{ ms: string; start: Date | string; end: Date | string | null }>`
          SELECT (extract(epoch FROM t.at) * 1000)::bigint::text AS ms,
                 ${periodStart(sql`${period}::text`, sql`${tz}::text`, at)} AS start,
                 ${periodEnd(sql`${period}::text`, sql`${tz}::text`, at)} AS end
          FROM unnest(${ats.map((ms) => new Date(ms).toISOString())}::timestamptz[]) AS t(at)`.execute(db);
        expect(rows).toHaveLength(ats.length);
        for (const r of rows) {
          const ms = Number(r.ms);
          const start = period === 'lifetime' ? 'lifetime' : new Date(r.start!).getTime();
          const end = r.end === null ? null : new Date(r.end).getTime();
          const js = { start: period === 'lifetime' ? 'lifetime' : periodStartMs(period, tz, ms), end: periodEndMs(period, tz, ms) };
          if (start !== js.start || end !== js.end) mismatches.push(`${period} ${tz} ${new Date(ms).toISOString()}: sql ${start}..${end}, js ${js.start}..${js.end}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  }, 180_000);
});
