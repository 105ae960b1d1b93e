import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { count, dollars, toNano, when } from '../format';
import type { Account, ApiKey, Budget, Page, Period } from '../types';
import { ActionForm, ErrorNote, Field, message, Table, useLoad } from '../widgets';

const PERIODS: Period[] = ['day', 'week', 'month', 'lifetime'];

/** The form's limit, models, budget and expiry fields as an API body; `clear` sends null for empty fields (PATCH). */
function keySettings(form: FormData, clear: boolean): Record<string, unknown> {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const body: Record<string, unknown> = {};
  const optional = (field: string, value: unknown, empty: boolean) => {
    if (!empty) body[field] = value;
    else if (clear) body[field] = null;
  };
  const whole = (name: string) => {
    const n = Number(text(name));
    if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name}: a whole number above 0, or empty for no limit`);
    return n;
  };
  optional('rpm_limit', text('rpm_limit') && whole('rpm_limit'), !text('rpm_limit'));
  optional('tpm_limit', text('tpm_limit') && whole('tpm_limit'), !text('tpm_limit'));
  const models = text('allowed_models').split(/[\s,]+/).filter(Boolean);
  optional('allowed_models', models, models.length === 0);
  const budgets: Budget[] = PERIODS.filter((p) => text(`budget_${p}`)).map((period) => ({ period, limit: toNano(text(`budget_${period}`), `${period} budget`) }));
  if (budgets.length || clear) body.budgets = budgets;
  // Not nullable: an empty field leaves the zone as it is (UTC for a new key).
  if (text('budget_time_zone')) body.budget_time_zone = text('budget_time_zone');
  // The field is a UTC wall-clock time (datetime-local carries no zone).
  const expires = text('expires_at');
  const at = new Date(`${expires}Z`);
  if (expires && Number.isNaN(at.getTime())) throw new Error('Expires: a date and time (UTC)');
  optional('expires_at', expires && at.toISOString(), !expires);
  return body;
}

function dollarsField(nano: number | undefined): string {
  return nano === undefined ? '' : String(nano / 1e9);
}

/** Limits, models, budgets and expiry: the same fields for a new key and a change. */
function SettingsFields({ k }: { k?: ApiKey }) {
  const budget = (p: Period) => k?.budgets?.find((b) => b.period === p)?.limit;
  const expires = k?.expires_at ? new Date(k.expires_at).toISOString().slice(0, 16) : '';
  return (
    <>
      <Field label="Requests per minute" name="rpm_limit" inputMode="numeric" placeholder="no limit" defaultValue={k?.rpm_limit ?? ''} />
      <Field label="Tokens per minute" name="tpm_limit" inputMode="numeric" placeholder="no limit" defaultValue={k?.tpm_limit ?? ''} />
      <Field label="Models (comma-separated)" name="allowed_models" placeholder="every model" defaultValue={k?.allowed_models?.join(', ') ?? ''} />
      {PERIODS.map((p) => (
        <Field key={p} label={p === 'lifetime' ? 'Lifetime budget ($)' : `Budget per ${p} ($)`} name={`budget_${p}`} inputMode="decimal" placeholder="none" defaultValue={dollarsField(budget(p))} />
      ))}
      <Field label="Budget time zone" name="budget_time_zone" placeholder="UTC" defaultValue={k?.budget_time_zone ?? ''} />
      <Field label="Expires (UTC)" name="expires_at" type="datetime-local" defaultValue={expires} />
    </>
  );
}

function budgetsText(k: ApiKey): string {
  return k.budgets?.length ? k.budgets.map((b) => `${dollars(b.limit)}/${b.period}`).join(', ') : '—';
}

function status(k: ApiKey): string {
  if (k.revoked_at) return `revoked ${when(k.revoked_at)}`;
  if (k.expires_at && new Date(k.expires_at).getTime() <= Date.now()) return `expired ${when(k.expires_at)}`;
  return k.expires_at ? `active until ${when(k.expires_at)}` : 'active';
}

/** Key id -> name, for spend by key (all keys, or one account's). */
export function useKeyNames(accountId?: string): Map<string, string | null> | undefined {
  const keys = useLoad(() => api.get<{ data: ApiKey[] }>(`/admin/keys${query({ account_id: accountId })}`), [accountId]);
  return keys.data ? new Map(keys.data.data.map((k) => [k.id, k.name])) : undefined;
}

/** Keys, all or one account's: create (the secret shown once), change, revoke. */
export function KeysPanel({ accountId }: { accountId?: string }) {
  const keys = useLoad(() => api.get<{ data: ApiKey[] }>(`/admin/keys${query({ account_id: accountId })}`), [accountId]);
  const accounts = useLoad(() => (accountId ? Promise.resolve(undefined) : api.get<Page<Account>>('/admin/accounts?limit=1000')), [accountId]);
  const [secret, setSecret] = useState<{ key: string; id: string }>();
  const [editing, setEditing] = useState<string>();
  const [confirming, setConfirming] = useState<string>();
  const [error, setError] = useState<string>();

  const create = async (form: FormData) => {
    const account = accountId ?? String(form.get('account_id') ?? '');
    const name = String(form.get('name') ?? '').trim();
    const created = await api.post<ApiKey & { key: string }>('/admin/keys', { account_id: account, ...(name ? { name } : {}), ...keySettings(form, false) });
    setSecret({ key: created.key, id: created.id });
    keys.reload();
  };
  const update = (id: string) => async (form: FormData) => {
    const name = String(form.get('name') ?? '').trim();
    await api.patch(`/admin/keys/${encodeURIComponent(id)}`, { ...(name ? { name } : {}), ...keySettings(form, true) });
    setEditing(undefined);
    keys.reload();
  };
  const revoke = async (id: string) => {
    setError(undefined);
    try {
      await api.del(`/admin/keys/${encodeURIComponent(id)}`);
      setConfirming(undefined);
      keys.reload();
    } catch (e) {
      setError(message(e));
    }
  };
  const editedKey = keys.data?.data.find((k) => k.id === editing);
  return (
    <div class="keys">
      {secret ? (
        <div class="secret" role="status" data-testid="new-key">
          <p>
            New key <code>{secret.id}</code>. Copy it now: it is shown only this once.
          </p>
          <input readOnly value={secret.key} data-testid="new-key-secret" onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
          <button type="button" onClick={() => setSecret(undefined)}>
            Done
          </button>
        </div>
      ) : null}
      <details>
        <summary>New key</summary>
        <ActionForm action={create} submit="Create key" testid="create-key">
          {accountId ? null : (
            <label>
              <span>Account</span>
              <select name="account_id" required>
                {(accounts.data?.data ?? []).map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name} ({a.id})
                  </option>
                ))}
              </select>
            </label>
          )}
          <Field label="Name" name="name" maxLength={200} />
          <SettingsFields />
        </ActionForm>
      </details>
      <ErrorNote error={keys.error ?? error} />
      <Table
        testid="keys"
        rows={keys.data?.data ?? []}
        empty="No keys."
        columns={[
          ['name', (k) => k.name ?? '—'],
          ['prefix', (k) => <code>{k.prefix}</code>],
          ['account', (k) => <a href={`#/accounts/${encodeURIComponent(k.account_id)}`}>{k.account_id}</a>],
          ['rpm / tpm', (k) => `${count(k.rpm_limit)} / ${count(k.tpm_limit)}`],
          ['models', (k) => k.allowed_models?.join(', ') ?? 'all'],
          ['budgets', budgetsText],
          ['status', status],
          [
            '',
            (k) =>
              k.revoked_at ? null : (
                <span class="row-actions">
                  <button type="button" onClick={() => setEditing(editing === k.id ? undefined : k.id)}>
                    Edit
                  </button>
                  {confirming === k.id ? (
                    <button type="button" class="danger" onClick={() => revoke(k.id)}>
                      Confirm revoke
                    </button>
                  ) : (
                    <button type="button" onClick={() => setConfirming(k.id)}>
                      Revoke
                    </button>
                  )}
                </span>
              ),
          ],
        ]}
      />
      {editedKey ? (
        <div class="edit" key={editedKey.id}>
          <h3>Change key {editedKey.name ?? editedKey.prefix}</h3>
          <ActionForm action={update(editedKey.id)} submit="Save changes" testid="edit-key">
            <Field label="Name" name="name" maxLength={200} defaultValue={editedKey.name ?? ''} />
            <SettingsFields k={editedKey} />
          </ActionForm>
        </div>
      ) : null}
    </div>
  );
}
