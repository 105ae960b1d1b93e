import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { when } from '../format';
import type { AuditPage } from '../types';
import { ErrorNote, Section, Table, useLoad } from '../widgets';

/** The audit log, newest first: who changed what, before and after, with the request that did it. */
export function Audit() {
  const [target, setTarget] = useState('');
  const [action, setAction] = useState('');
  const log = useLoad(() => api.get<AuditPage>(`/admin/audit${query({ limit: 200, target_id: target, action })}`), [target, action]);
  const change = (v: unknown) => (v === null || v === undefined ? '—' : <code>{JSON.stringify(v)}</code>);
  return (
    <Section title="Audit log">
      <form class="action" data-testid="audit-filter" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>Target id</span>
          <input value={target} onChange={(e) => setTarget((e.currentTarget as HTMLInputElement).value.trim())} placeholder="acct_…, key_…, usr_…" />
        </label>
        <label>
          <span>Action</span>
          <input value={action} onChange={(e) => setAction((e.currentTarget as HTMLInputElement).value.trim())} placeholder="key.revoke" />
        </label>
      </form>
      <ErrorNote error={log.error} />
      <Table
        testid="audit"
        rows={log.data?.data ?? []}
        empty="No changes recorded."
        columns={[
          ['when', (e) => when(e.created_at)],
          ['who', (e) => (e.actor.kind === 'user' ? `${e.actor.name ?? e.actor.id}` : e.actor.kind === 'cli' ? `CLI (${e.actor.name ?? ''})` : e.actor.kind === 'admin_key' ? 'admin key' : `gateway (${e.actor.name ?? ''})`)],
          ['action', (e) => e.action],
          ['target', (e) => <code>{e.target_id ?? e.target_type}</code>],
          ['before', (e) => change(e.before)],
          ['after', (e) => change(e.after)],
          ['request', (e) => (e.request_id ? <code>{e.request_id}</code> : '—')],
        ]}
      />
    </Section>
  );
}
