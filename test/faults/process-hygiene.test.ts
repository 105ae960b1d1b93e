/**
 * What a process leaves behind and warns about: no listener piles up on a shared AbortSignal
 * however many requests run at once, a request whose headers Node had to cut is refused as such
 * (431) rather than with a wrong message, and a clean exit of an SQLite gateway leaves its WAL
 * checkpointed and no lock file behind.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startGatewayProcess } from '../support/gateway-process.js';

describe('listeners on shared signals', () => {
  let gw: TestGateway;
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  beforeAll(async () => {
    gw = await startTestGateway({ localRate: 10 });
    process.on('warning', onWarning);
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await gw?.close();
  });

  it('24 streams at once, then a drain that ends them, add no MaxListenersExceededWarning', async () => {
    const streams = Array.from({ length: 24 }, async () => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-haiku', stream: true, max_tokens: 400, messages: [{ role: 'user', content: 'Tell me a story.' }] }),
      });
      const reader = res.body!.getReader();
      let first = true;
      for (;;) {
        const { done } = await reader.read().catch(() => ({ done: true }));
        if (first) {
          first = false;
          started++;
        }
        if (done) return res.status;
      }
    });
    let started = 0;
    while (started < 24) await new Promise((r) => setTimeout(r, 20));
    expect(gw.gateway.lifecycle.inFlight).toBe(24);
    // The drain's end aborts every run at once.
    await gw.gateway.close(0);
    expect(await Promise.all(streams)).toEqual(Array(24).fill(200));
    await new Promise((r) => setImmediate(r));
    const leaks = warnings.filter((w) => w.name === 'MaxListenersExceededWarning');
    console.log(`24 concurrent streams and a drain: ${leaks.length} MaxListenersExceededWarning`);
    expect(leaks.map((w) => w.message)).toEqual([]);
  });
});

/** A POST with `extra` header lines before the usual ones, written on a raw socket exactly as given. */
function postWithHeaders(url: string, key: string, extra: number): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] });
  const { hostname, port } = new URL(url);
  // The credentials and the body's headers come last, where a cut list loses them.
  const head =
    `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}:${port}\r\n${'x:1\r\n'.repeat(extra)}` +
    `authorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (text += d));
    socket.on('end', () => {
      const [status, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(status)?.[1]), body: rest.join('\r\n\r\n') });
    });
    socket.on('error', reject);
    socket.end(head + body);
  });
}

describe('very many request headers', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => gw?.close());

  it('2,000 headers within the size limit are all read: the request is served, not a 415 quoting the right content type', async () => {
    const many = await postWithHeaders(gw.url, gw.key, 2_000);
    console.log(`2,000 extra headers: ${many.status} ${many.body.slice(0, 120)}`);
    expect(many.body).not.toContain('content-type must be');
    expect(many.status).toBe(200);
    // Headers past the size limit are still refused, with a body that says so.
    const huge = await postWithHeaders(gw.url, gw.key, 20_000);
    expect(huge.status).toBe(431);
    expect(huge.body).toContain('the request headers are too large');
  });
});

describe('a clean exit on SQLite', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-exit-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('checkpoints the WAL into the database file and removes the lock and its pid file', async () => {
    const data = join(dir, 'data');
    const admin = 'sk-admin-exit-0123456789';
    const gw = await startGatewayProcess({ SWITCHYARD_DATA_DIR: data, SWITCHYARD_EMBEDDED_DB: 'sqlite', SWITCHYARD_ADMIN_KEY: admin });
    try {
      const post = async (path: string, body: unknown) =>
        (await (await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
      const account = await post('/admin/accounts', { name: 'exit', balance: 1_000_000_000 });
      const { key } = await post('/admin/keys', { account_id: account.id });
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'local-haiku', max_tokens: 16, messages: [{ role: 'user', content: `Hello ${i}` }] }),
        });
        expect(res.status).toBe(200);
      }
      expect(statSync(join(data, 'ledger.sqlite-wal')).size).toBeGreaterThan(0);
    } finally {
      gw.proc.kill('SIGTERM');
    }
    expect(await gw.exited).toBe(0);
    const files = readdirSync(data);
    const wal = existsSync(join(data, 'ledger.sqlite-wal')) ? statSync(join(data, 'ledger.sqlite-wal')).size : 0;
    console.log(`after SIGTERM: ${files.join(', ')}; ledger.sqlite ${statSync(join(data, 'ledger.sqlite')).size} bytes, WAL ${wal} bytes`);
    expect(wal).toBe(0);
    expect(files).not.toContain('switchyard.lock');
    expect(files).not.toContain('switchyard.lock.pid');
    expect(statSync(join(data, 'ledger.sqlite')).size).toBeGreaterThan(4096);
  }, 90_000);
});
