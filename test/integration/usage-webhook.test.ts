/**
 * The usage webhook through a started gateway and the fake upstream, on every database: every
 * request's usage record reaches an HTTP receiver with the fields GET /admin/accounts/{id}/usage
 * and the ledger show, signed as Standard Webhooks say; a receiver that fails for a while (500s,
 * then 429s with retry-after) loses nothing and holds up no request; without a URL nothing runs.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbTargets } from '../ledger/db-targets.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startFakeGateway, type FakeGateway } from '../support/gateway.js';
import { startWebhookReceiver, verifiesWith, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = `whsec_${Buffer.from('switchyard usage webhook test secret!').toString('base64')}`;
/** Longer than the statement timeout (1 s), which the delay must exceed. */
const DELAY_MS = 1_200;

async function chat(gw: FakeGateway['gw'], body: Record<string, unknown>): Promise<{ status: number; requestId: string; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'up-openai', messages: [{ role: 'user', content: 'Hello' }], ...body }),
  });
  await res.text();
  return { status: res.status, requestId: res.headers.get('x-request-id')!, ms: Date.now() - started };
}

/** A webhook record as the admin API shows the same record: money as JSON numbers, no key or deployments. */
function asAdminRecord(w: Record<string, any>) {
  const { key_id: _key, deployments: _deployments, ...rest } = w;
  return {
    ...rest,
    cost: Number(w.cost),
    beyond_hold: Number(w.beyond_hold),
    pricing: w.pricing?.map((p: any) => ({ ...p, cost: Number(p.cost), lines: p.lines.map((l: any) => ({ ...l, rate: Number(l.rate) })) })) ?? null,
  };
}

describe.each(dbTargets)('usage webhook ($name)', (target) => {
  let fg: FakeGateway;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    fg = await startFakeGateway((fake) => ({ catalog: fakeCatalog(fake), target, usageWebhook: { url: receiver.url, secret: SECRET, marginMs: DELAY_MS, pollMs: 100 } }));
  });
  afterAll(async () => {
    await fg?.close();
    await receiver?.close();
  });

  it('delivers every request\'s record, with the admin API\'s and the ledger\'s fields, signed', async () => {
    const { gw, fake } = fg;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await chat(gw, { user: `end-user-${i}` })).requestId);
    ids.push((await chat(gw, { stream: true, stream_options: { include_usage: true } })).requestId);
    ids.push((await chat(gw, { model: 'up-anthropic', messages: [{ role: 'user', content: 'Hi' }] })).requestId);
    // An upstream that fails: the record says so, and is delivered like any other.
    fake.script({ status: 400 });
    const failed = await chat(gw, {});
    expect(failed.status).toBe(400);
    ids.push(failed.requestId);

    await receiver.until(() => ids.every((id) => receiver.delivered().some((r) => r.request_id === id)), 30_000, 'every record');
    const page = (await (await gw.admin(`/admin/accounts/${gw.accountId}/usage?limit=100`)).json()) as { data: Array<Record<string, any>> };
    const ledgerRecords = await gw.ledger.usageRecords(gw.accountId, 100);
    for (const id of ids) {
      const sent = receiver.delivered().filter((r) => r.request_id === id);
      expect(sent).toHaveLength(1);
      const [w] = sent;
      const admin = page.data.find((r) => r.request_id === id)!;
      const own = ledgerRecords.find((r) => r.requestId === id)!;
      expect(asAdminRecord(w)).toEqual(admin);
      expect(w.key_id).toBe(own.keyId);
      expect(w.key_id).toMatch(/^key_/);
      expect(w.cost).toBe(own.cost.toString());
      expect(w.deployments).toEqual(admin.attempts.map((a: any) => a.deployment ?? a.model));
    }
    expect(receiver.delivered().find((r) => r.request_id === ids[0])).toMatchObject({ end_user: 'end-user-0', status: 'ok', model_requested: 'up-openai', unit: 'nanodollars' });
    expect(receiver.delivered().find((r) => r.request_id === failed.requestId)!.status).not.toBe('ok');
    expect(Number(receiver.delivered().find((r) => r.request_id === ids[0])!.cost)).toBeGreaterThan(0);
    // Oldest first, across and within POSTs.
    const order = receiver.delivered().map((r) => `${r.created_at} ${r.request_id}`);
    expect(order).toEqual([...order].sort());

    for (const post of receiver.posts) {
      expect(post.headers['content-type']).toBe('application/json');
      expect(post.body.type).toBe('usage.records');
      expect(post.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]+$/);
      expect(Math.abs(Number(post.headers['webhook-timestamp']) - post.at / 1000)).toBeLessThan(60);
      expect(verifiesWith(post, SECRET)).toBe(true);
      expect(verifiesWith(post, `whsec_${Buffer.alloc(32, 9).toString('base64')}`)).toBe(false);
      expect(verifiesWith({ ...post, raw: post.raw.replace('"cost":"', '"cost":"1') }, SECRET)).toBe(false);
    }
  });
});

describe('usage webhook: a receiver that fails for a while', () => {
  let fg: FakeGateway;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    fg = await startFakeGateway((fake) => ({
      catalog: fakeCatalog(fake),
      target: dbTargets[0],
      usageWebhook: { url: receiver.url, marginMs: DELAY_MS, pollMs: 100, batchSize: 5, backoff: { baseMs: 200, maxMs: 1_000 } },
    }));
  });
  afterAll(async () => {
    await fg?.close();
    await receiver?.close();
  });

  it('retries through 500s and 429s (after their retry-after) until delivered; requests are answered meanwhile', async () => {
    // Four 500s, then three 429s asking for a second each, then 200s.
    receiver.answer((_post, n) => (n <= 4 ? { status: 500 } : n <= 7 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    const results: Array<{ status: number; requestId: string; ms: number }> = [];
    // Requests go on while the receiver refuses: none waits for the export.
    while (receiver.posts.length < 7) {
      results.push(await chat(fg.gw, {}));
      await new Promise((r) => setTimeout(r, 50));
    }
    for (let i = 0; i < 3; i++) results.push(await chat(fg.gw, {}));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const slowest = Math.max(...results.map((r) => r.ms));
    console.log(`${results.length} requests while the receiver failed; slowest ${slowest} ms`);
    expect(slowest).toBeLessThan(2_000);

    const ids = results.map((r) => r.requestId);
    await receiver.until(() => ids.every((id) => receiver.delivered().some((r) => r.request_id === id)), 60_000, 'every record after the failures');
    // Nothing delivered was lost, nothing delivered twice (each batch was acknowledged once).
    const delivered = receiver.delivered().map((r) => r.request_id);
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(delivered.filter((id) => ids.includes(id))).toHaveLength(ids.length);
    // The failed tries were one batch, sent again under the same webhook-id; each 429's retry-after was waited out.
    const first = receiver.posts.slice(0, 8);
    expect(new Set(first.map((p) => p.headers['webhook-id'])).size).toBe(1);
    expect(first.map((p) => p.status)).toEqual([500, 500, 500, 500, 429, 429, 429, 200]);
    for (const i of [5, 6, 7]) expect(first[i].at - first[i - 1].at).toBeGreaterThanOrEqual(950);
    // Unsigned without a secret.
    expect(first[0].headers['webhook-signature']).toBeUndefined();
  }, 90_000);
});

describe('usage webhook: a receiver that answers 410 Gone', () => {
  let fg: FakeGateway;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    receiver.answer(() => ({ status: 410 }));
    fg = await startFakeGateway((fake) => ({ catalog: fakeCatalog(fake), target: dbTargets.find((t) => t.name === 'sqlite'), usageWebhook: { url: receiver.url, marginMs: DELAY_MS, pollMs: 100 } }));
  });
  afterAll(async () => {
    await fg?.close();
    await receiver?.close();
  });

  it('stops this gateway\'s export and gives its claim back; the records stay undelivered in the ledger', async () => {
    const { requestId } = await chat(fg.gw, {});
    await receiver.until(() => receiver.posts.length > 0, 30_000, 'the first POST');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.posts).toHaveLength(1);
    expect(receiver.posts[0].body.data.records.map((r) => r.request_id)).toEqual([requestId]);
    const { rows } = await sql<{ delivered: bigint | number; holder: string | null }>`SELECT delivered, holder FROM usage_exports`.execute(fg.gw.ledger.db);
    expect(rows.map((r) => ({ delivered: Number(r.delivered), holder: r.holder }))).toEqual([{ delivered: 0, holder: null }]);
  });
});

describe('usage webhook: off without a URL', () => {
  let fg: FakeGateway;
  beforeAll(async () => {
    fg = await startFakeGateway((fake) => ({ catalog: fakeCatalog(fake), target: dbTargets.find((t) => t.name === 'sqlite') }));
  });
  afterAll(() => fg?.close());

  it('claims nothing and reads nothing', async () => {
    expect((await chat(fg.gw, {})).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const { rows } = await sql<{ n: bigint | number }>`SELECT count(*) AS n FROM usage_exports`.execute(fg.gw.ledger.db);
    expect(Number(rows[0].n)).toBe(0);
  });
});
