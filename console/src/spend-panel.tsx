import { useState } from 'preact/hooks';
import { count, dollars } from './format';
import { SpendChart } from './spend-chart';
import { everyDay } from './spend-days';
import type { GroupBy, SpendList } from './types';
import { ErrorNote, Table, useLoad } from './widgets';

const GROUPS: Array<[GroupBy, string]> = [
  ['day', 'per day'],
  ['model', 'by model'],
  ['key', 'by key'],
  ['user', 'by end user'],
  ['session', 'by session'],
];

const DAY_MS = 86_400_000;

/** The last `days` days up to now, as the spend endpoints take them. */
export function lastDays(days: number): { from: string; to: string } {
  const to = new Date(Date.now() + 60_000);
  const from = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - (days - 1) * DAY_MS);
  return { from: from.toISOString(), to: to.toISOString() };
}

/** Spend over a range, as a chart and a table, grouped as the reader picks. */
export function SpendPanel({
  load,
  groups = GROUPS.map(([g]) => g),
  keyNames,
}: {
  load: (groupBy: GroupBy, range: { from: string; to: string }) => Promise<SpendList>;
  groups?: GroupBy[];
  /** Key id -> name, so that spend by key reads "name (key_id)". */
  keyNames?: Map<string, string | null>;
}) {
  const [groupBy, setGroupBy] = useState<GroupBy>('day');
  const [days, setDays] = useState(30);
  const spend = useLoad(() => load(groupBy, lastDays(days)), [groupBy, days]);
  const label = (group: string | null) => {
    if (group === null) return '(none)';
    const name = groupBy === 'key' ? keyNames?.get(group) : undefined;
    return name ? `${name} (${group})` : group;
  };
  const caption = `Cost ${GROUPS.find(([g]) => g === groupBy)![1]}, last ${days} days`;
  return (
    <div class="spend" data-testid="spend-panel">
      <div class="toolbar" role="group" aria-label="Group spend">
        {GROUPS.filter(([g]) => groups.includes(g)).map(([g, label]) => (
          <button type="button" key={g} class={g === groupBy ? 'on' : ''} aria-pressed={g === groupBy} onClick={() => setGroupBy(g)}>
            {label}
          </button>
        ))}
        <select aria-label="Range" value={String(days)} onChange={(e) => setDays(Number((e.currentTarget as HTMLSelectElement).value))}>
          <option value="1">today</option>
          <option value="7">7 days</option>
          <option value="30">30 days</option>
          <option value="90">90 days</option>
        </select>
        <button type="button" onClick={spend.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={spend.error} />
      {spend.data ? (
        <>
          <SpendChart rows={groupBy === 'day' ? everyDay(spend.data.data, days) : spend.data.data} label={caption} groupLabel={label} />
          <Table
            testid="spend-table"
            rows={spend.data.data}
            empty="No spend in this range."
            columns={[
              [groupBy, (r) => label(r.group)],
              ['requests', (r) => count(r.requests)],
              ['input tokens', (r) => count(r.input_tokens)],
              ['output tokens', (r) => count(r.output_tokens)],
              ['cached tokens', (r) => count(r.cached_tokens)],
              ['cost', (r) => dollars(r.cost)],
            ]}
          />
        </>
      ) : null}
    </div>
  );
}
