import { api, query } from '../api';
import { dollars, when } from '../format';
import { SpendPanel } from '../spend-panel';
import type { Balance, SpendList } from '../types';
import { ErrorNote, Section, Table, useLoad } from '../widgets';

/** A key holder's own key: balance, budgets and spend, from GET /v1/balance and /v1/spend. */
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
    </>
  );
}
