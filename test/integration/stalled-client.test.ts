/**
 * A streaming client that stops reading but keeps its connection: once its buffers are full and
 * it has read nothing for the send timeout, the gateway cuts it off like a disconnect. The run
 * stops, what was produced is billed, and the hold returns, instead of the hold being extended
 * for as long as the connection stays open.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { waitFor } from '../ledger/http-billing.js';

const SEND_TIMEOUT_MS = 300;

let started: FakeGateway;
let gw: TestGateway;
beforeAll(async () => {
  // An upstream answer of 30,000 words, far more than the sockets' buffers hold.
  const long = { id: 'long', provider: 'up-openai', upstream_model: 'words:30000', price: { input: '1.00', output: '4.00' }, max_output_tokens: 32_000 };
  started = await startFakeGateway((fake) => ({ catalog: fakeCatalog(fake, { models: [long] }), sendTimeoutMs: SEND_TIMEOUT_MS }));
  gw = started.gw;
});
afterAll(async () => started?.close());

/** Sends a streaming request on a raw socket and never reads the answer. */
function stalledStream(body: unknown): Promise<{ socket: Socket; closed: Promise<void> }> {
  const { port } = new URL(gw.url);
  const json = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.pause();
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
      );
      resolve({ socket, closed: new Promise((r) => socket.once('close', () => r())) });
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

describe('a client that stops reading', () => {
  it('is cut off after the send timeout; the run is billed for what it produced and the hold returns', async () => {
    const before = await gw.ledger.getAccount(gw.accountId);
    const { socket, closed } = await stalledStream({ model: 'long', stream: true, max_tokens: 32_000, messages: [{ role: 'user', content: 'Tell me everything.' }] });
    try {
      const record = await waitFor(async () => (await gw.ledger.usageRecords(gw.accountId)).find((r) => r.status === 'cancelled'), 30_000, 'the cut-off run to settle');
      // Produced until the buffers filled, not the whole answer.
      expect(record.tokens.output).toBeGreaterThan(0n);
      expect(record.tokens.output).toBeLessThan(30_000n);
      const after = await gw.ledger.getAccount(gw.accountId);
      expect(after!.held).toBe(0n);
      expect(after!.balance).toBe(before!.balance - record.cost);
      expect(await gw.ledger.balanceCheck()).toEqual({ ok: true, problems: [] });
      // The gateway closed the connection itself: what it had sent is followed by the end.
      socket.resume();
      await closed;
    } finally {
      socket.destroy();
    }
  }, 60_000);
});
