import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { dollars } from '../format';
import { SpendPanel } from '../spend-panel';
import type { Account, Page, SpendList } from '../types';
import { ErrorNote, Section, useLoad } from '../widgets';
import { useKeyNames } from './keys';

/** Spend across accounts (or one), with the totals the operator looks at first. */
export function Overview() {
  const accounts = useLoad(() => api.get<Page<Account>>('/admin/accounts?limit=1000'), []);
  const [account, setAccount] = useState('');
  const keyNames = useKeyNames();
  const list = accounts.data?.data ?? [];
  const total = (f: (a: Account) => number) => list.reduce((s, a) => s + f(a), 0);
  return (
    <>
      <Section title="Accounts">
        <ErrorNote error={accounts.error} />
        <dl class="figures" data-testid="totals">
          <div>
            <dt>Accounts</dt>
            <dd>{accounts.data ? `${list.length}${accounts.data.has_more ? '+' : ''}` : '…'}</dd>
          </div>
          <div>
            <dt>Balances</dt>
            <dd>{dollars(total((a) => a.balance))}</dd>
          </div>
          <div>
            <dt>Held now</dt>
            <dd>{dollars(total((a) => a.held))}</dd>
          </div>
        </dl>
      </Section>
      <Section title="Spend">
        <label class="inline">
          <span>Account</span>
          <select aria-label="Account" value={account} onChange={(e) => setAccount((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">all accounts</option>
            {list.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} ({a.id})
              </option>
            ))}
          </select>
        </label>
        <SpendPanel keyNames={keyNames} load={(group_by, range) => api.get<SpendList>(`/admin/spend${query({ group_by, account_id: account || undefined, ...range })}`)} key={account} />
      </Section>
    </>
  );
}
