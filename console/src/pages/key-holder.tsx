import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { count, dollars, when } from '../format';
import { SpendPanel } from '../spend-panel';
import type { Balance, Page, SpendList, UsageRecord } from '../types';
import { ErrorNote, OlderButton, Section, Table, useLoad, usePages } from '../widgets';

/** A key holder's own key: balance, budgets, spend and requests, from GET /v1/balance, /v1/spend and /v1/usage. */
export function KeyHolder({ who }: { who: 'key' | 'user' }) {
  const mine = who === 'key' ? 'this key' : 'you';
  const balance = useLoad(() => api.get<Balance>('/v1/balance'), []);
  const b = balance.data;
  return (
    <>
      <Section title="Balance">
        <ErrorNote error={balance.error} />
        {b ? (
          <dl class="figures" data-testid="balance">
            <div>
              <dt>Account</dt>
              <dd>{b.account_id}</dd>
            </div>
            <div>
              <dt>Balance</dt>
              <dd>{dollars(b.balance)}</dd>
            </div>
            <div>
              <dt>Held by requests in flight</dt>
              <dd>{dollars(b.held)}</dd>
            </div>
            <div>
              <dt>Available</dt>
              <dd>{dollars(b.available)}</dd>
            </div>
          </dl>
        ) : null}
      </Section>
      <Section title={who === 'key' ? 'Budgets of this key' : 'Your budgets'}>
        <Table
          testid="budgets"
          rows={b?.budgets ?? []}
          empty={who === 'key' ? "This key has no budgets: it spends from the account's balance alone." : "You have no budgets: you spend from the account's balance alone."}
          columns={[
            ['period', (r) => r.period],
            ['limit', (r) => dollars(r.limit)],
            ['spent', (r) => dollars(r.spent)],
            ['held', (r) => dollars(r.held)],
            ['remaining', (r) => dollars(r.remaining)],
            ['resets', (r) => when(r.resets_at)],
          ]}
        />
      </Section>
      <Section title={`Spend and usage of ${mine}`}>
        <SpendPanel groups={['day', 'model', 'user', 'session']} load={(group_by, range) => api.get<SpendList>(`/v1/spend${query({ group_by, ...range })}`)} />
      </Section>
      <Section title={who === 'key' ? 'Requests of this key, newest first' : 'Your requests, newest first'}>
        <OwnUsage />
      </Section>
    </>
  );
}

/** GET /v1/usage a page at a time, filtered by model and session. */
function OwnUsage() {
  const [filter, setFilter] = useState<{ model?: string; session?: string }>({});
  const usage = usePages((before) => api.get<Page<UsageRecord>>(`/v1/usage${query({ limit: 50, before_id: before, ...filter })}`), [filter.model, filter.session]);
  const apply = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const value = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    setFilter({ model: value('model'), session: value('session') });
  };
  return (
    <>
      <form class="filters" data-testid="usage-filter" onSubmit={apply}>
        <label>
          Model <input name="model" maxLength={256} />
        </label>
        <label>
          Session <input name="session" maxLength={256} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={usage.error} />
      <Table
        testid="my-usage"
        rows={usage.rows}
        empty="No requests."
        columns={[
          ['time', (r) => when(r.created_at)],
          ['request', (r) => r.request_id],
          ['model', (r) => r.model_requested],
          ['served', (r) => r.model_served ?? '—'],
          ['status', (r) => r.status],
          ['input', (r) => count(r.input_tokens)],
          ['output', (r) => count(r.output_tokens)],
          ['cost', (r) => dollars(r.cost)],
          ['session', (r) => r.session ?? '—'],
        ]}
      />
      <OlderButton pages={usage} />
    </>
  );
}
