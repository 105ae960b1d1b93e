import { api, query } from '../api';
import { count, dollars, toNano, when } from '../format';
import { SpendPanel } from '../spend-panel';
import type { Account, JournalEntry, Page, SpendList, UsageRecord } from '../types';
import { ActionForm, ErrorNote, Field, OlderButton, Section, Table, useLoad, usePages } from '../widgets';
import { KeysPanel, useKeyNames } from './keys';

export function Accounts() {
  const accounts = useLoad(() => api.get<Page<Account>>('/admin/accounts?limit=1000'), []);
  const create = async (form: FormData) => {
    const name = String(form.get('name') ?? '').trim();
    const opening = String(form.get('balance') ?? '').trim();
    const a = await api.post<Account>('/admin/accounts', { name, ...(opening ? { balance: toNano(opening, 'Opening balance') } : {}) });
    accounts.reload();
    return `Created account ${a.name} (${a.id}).`;
  };
  return (
    <>
      <Section title="New account">
        <ActionForm action={create} submit="Create account" testid="create-account">
          <Field label="Name" name="name" required maxLength={200} />
          <Field label="Opening balance ($)" name="balance" inputMode="decimal" placeholder="0" />
        </ActionForm>
      </Section>
      <Section title="Accounts">
        <ErrorNote error={accounts.error} />
        <Table
          testid="accounts"
          rows={accounts.data?.data ?? []}
          empty="No accounts yet."
          columns={[
            ['name', (a) => <a href={`#/accounts/${encodeURIComponent(a.id)}`}>{a.name}</a>],
            ['id', (a) => <code>{a.id}</code>],
            ['balance', (a) => dollars(a.balance)],
            ['held', (a) => dollars(a.held)],
            ['available', (a) => dollars(a.available)],
            ['created', (a) => when(a.created_at)],
          ]}
        />
      </Section>
    </>
  );
}

/** One account: credits, keys, spend, ledger and usage. */
export function AccountDetail({ id }: { id: string }) {
  const path = `/admin/accounts/${encodeURIComponent(id)}`;
  const account = useLoad(() => api.get<Account>(path), [id]);
  const ledger = usePages((before) => api.get<Page<JournalEntry>>(`${path}/ledger${query({ limit: 50, before_id: before })}`), [id]);
  const usage = usePages((before) => api.get<Page<UsageRecord>>(`${path}/usage${query({ limit: 50, before_id: before })}`), [id]);
  const keyNames = useKeyNames(id);
  const credit = async (form: FormData) => {
    const amount = toNano(String(form.get('amount') ?? ''), 'Amount');
    const reason = String(form.get('reason') ?? '').trim() || 'console';
    await api.post(`${path}/credits`, { amount, reason });
    account.reload();
    ledger.reload();
    return `Added ${dollars(amount)}.`;
  };
  const a = account.data;
  return (
    <>
      <p>
        <a href="#/accounts">← Accounts</a>
      </p>
      <ErrorNote error={account.error} />
      {a ? (
        <Section title={`Account ${a.name}`}>
          <dl class="figures" data-testid="account">
            <div>
              <dt>Id</dt>
              <dd>{a.id}</dd>
            </div>
            <div>
              <dt>Balance</dt>
              <dd>{dollars(a.balance)}</dd>
            </div>
            <div>
              <dt>Held</dt>
              <dd>{dollars(a.held)}</dd>
            </div>
            <div>
              <dt>Available</dt>
              <dd>{dollars(a.available)}</dd>
            </div>
          </dl>
        </Section>
      ) : null}
      <Section title="Add credits">
        <ActionForm action={credit} submit="Add credits" testid="add-credits">
          <Field label="Amount ($, negative to correct)" name="amount" required inputMode="decimal" />
          <Field label="Reason" name="reason" maxLength={500} placeholder="console" />
        </ActionForm>
      </Section>
      <Section title="Keys">
        <KeysPanel accountId={id} />
      </Section>
      <Section title="Spend">
        <SpendPanel keyNames={keyNames} load={(group_by, range) => api.get<SpendList>(`/admin/spend${query({ group_by, account_id: id, ...range })}`)} />
      </Section>
      <Section title="Usage, newest first">
        <ErrorNote error={usage.error} />
        <button type="button" onClick={usage.reload}>
          Refresh
        </button>
        <Table
          testid="usage"
          rows={usage.rows}
          empty="No requests yet."
          columns={[
            ['time', (r) => when(r.created_at)],
            ['model', (r) => r.model_requested],
            ['served', (r) => r.model_served ?? '—'],
            ['status', (r) => r.status],
            ['input', (r) => count(r.input_tokens)],
            ['output', (r) => count(r.output_tokens)],
            ['cached', (r) => count(r.cache_read_tokens)],
            ['cost', (r) => dollars(r.cost)],
            ['end user', (r) => r.end_user ?? '—'],
            ['session', (r) => r.session ?? '—'],
          ]}
        />
        <OlderButton pages={usage} />
      </Section>
      <Section title="Ledger, newest first">
        <ErrorNote error={ledger.error} />
        <Table
          testid="ledger"
          rows={ledger.rows}
          empty="No entries."
          columns={[
            ['time', (e) => when(e.created_at)],
            ['kind', (e) => e.kind],
            ['amount', (e) => dollars(e.amount)],
            ['balance after', (e) => dollars(e.balance_after)],
            ['model', (e) => e.model ?? '—'],
            ['reason', (e) => e.reason ?? '—'],
            ['request', (e) => e.request_id ?? '—'],
          ]}
        />
        <OlderButton pages={ledger} />
      </Section>
    </>
  );
}
