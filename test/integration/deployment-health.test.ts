/**
 * Deployment health over the real HTTP server: GET /admin/deployments (admin only, every
 * deployment of every catalog model, checked against the document) and the per-deployment metrics,
 * before and after a deployment cools down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDeploymentHealth } from '../../src/routing/health/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors } from '../support/stream-checks.js';

let gw: TestGateway;
const health = new LocalDeploymentHealth();
beforeAll(async () => {
  gw = await startTestGateway({ health });
});
afterAll(async () => {
  await gw?.close();
  await health.close();
});

async function deployments(): Promise<any[]> {
  const res = await gw.admin('/admin/deployments');
  const body: any = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(await bodyErrors('adminListDeployments', 200, body)).toEqual([]);
  return body.data;
}

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

const metrics = async () => (await fetch(`${gw.url}/metrics`)).text();

describe('GET /admin/deployments', () => {
  it('needs the admin key', async () => {
    const none = await fetch(`${gw.url}/admin/deployments`);
    expect(none.status).toBe(401);
    const client = await fetch(`${gw.url}/admin/deployments`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(client.status).toBe(401);
    expect(await bodyErrors('adminListDeployments', 401, await client.json())).toEqual([]);
  });

  it('lists every deployment of every catalog model, healthy before any call', async () => {
    const data = await deployments();
    const models = new Set(data.map((d) => d.model));
    expect([...models].sort()).toEqual([...gw.gateway.catalog.models.keys()].sort());
    for (const d of data) {
      expect(d).toMatchObject({ state: 'healthy', error_rate: 0, in_flight: 0, cooldown_until: null, latency_ms: null });
      expect(d.id.startsWith(`${d.model}/`)).toBe(true);
      expect(gw.gateway.catalog.providers.has(d.provider) || d.provider === 'local').toBe(true);
    }
  });

  it('shows a cooldown, its end, the error rate, latency and calls in flight; the metrics agree', async () => {
    const [first, second] = await deployments();
    const before = await metrics();
    const end = health.begin(second.id);
    health.recordSuccess(second.id, 250, Date.now());
    const at = Date.now();
    health.recordFailure(first.id, { status: 529, retryAfterMs: 20_000 }, at);
    health.recordFailure(first.id, { status: 400 }, at); // the client's fault: not counted

    const data = await deployments();
    const cooled = data.find((d) => d.id === first.id);
    expect(cooled).toMatchObject({ state: 'cooling_down', error_rate: 1, in_flight: 0 });
    expect(Date.parse(cooled.cooldown_until)).toBe(at + 20_000);
    expect(data.find((d) => d.id === second.id)).toMatchObject({ state: 'healthy', error_rate: 0, latency_ms: 250, in_flight: 1 });

    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(sample(after, 'switchyard_deployment_cooldown', { deployment: first.id })).toBe(1);
    expect(sample(after, 'switchyard_deployment_cooldown', { deployment: second.id })).toBe(0);
    expect(delta('switchyard_deployment_requests_total', { deployment: first.id, outcome: 'failure' })).toBe(1);
    expect(delta('switchyard_deployment_requests_total', { deployment: first.id, outcome: 'ignored' })).toBe(1);
    expect(delta('switchyard_deployment_requests_total', { deployment: second.id, outcome: 'success' })).toBe(1);
    expect(delta('switchyard_deployment_cooldowns_total', { deployment: first.id, reason: 'retry_after' })).toBe(1);
    expect(sample(after, 'switchyard_deployment_in_flight', { deployment: second.id })).toBe(1);
    expect(delta('switchyard_deployment_latency_seconds_count', { deployment: second.id })).toBe(1);
    end();
    expect(sample(await metrics(), 'switchyard_deployment_in_flight', { deployment: second.id })).toBe(0);
  });
});
