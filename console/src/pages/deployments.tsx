import { api } from '../api';
import { when } from '../format';
import type { DeploymentList } from '../types';
import { ErrorNote, Section, Table, useLoad } from '../widgets';

const STATE: Record<string, string> = { healthy: 'healthy', cooling_down: 'cooling down', probing: 'probing' };

/** Every deployment of every model with its health on the instance that answers. */
export function Deployments() {
  const list = useLoad(() => api.get<DeploymentList>('/admin/deployments'), []);
  return (
    <Section title="Deployments">
      <p class="muted">
        Cooldowns are shared by every instance when Redis is configured; error rate, latency and calls in flight are this instance's.{' '}
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </p>
      <ErrorNote error={list.error} />
      <Table
        testid="deployments"
        rows={list.data?.data ?? []}
        empty="No deployments."
        columns={[
          ['deployment', (d) => <code>{d.id}</code>],
          ['provider', (d) => d.provider],
          ['upstream model', (d) => <code>{d.upstream_model}</code>],
          ['weight', (d) => String(d.weight)],
          ['state', (d) => <span class={`state ${d.state}`}>{STATE[d.state] ?? d.state}</span>],
          ['error rate', (d) => `${Math.round(d.error_rate * 100)}%`],
          ['latency', (d) => (d.latency_ms === null ? '—' : `${Math.round(d.latency_ms)} ms`)],
          ['in flight', (d) => String(d.in_flight)],
          ['cooldown until', (d) => when(d.cooldown_until)],
        ]}
      />
    </Section>
  );
}
