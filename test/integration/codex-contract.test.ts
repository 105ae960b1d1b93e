/**
 * What Codex sends that other Responses clients do not, through the real server: a WebSocket
 * upgrade on `GET /v1/responses` (with `supports_websockets`), answered 426 at once so Codex falls
 * back to `POST /v1/responses` without retrying; and `namespace` tools (its sub-agent tools),
 * flattened to function tools for upstreams that are not Responses and restored on the way back.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { fakeCatalog } from '../support/fake-catalog.js';
import { useSdkGateway } from '../support/sdk-gateway.js';

const sdk = useSdkGateway((fake) => ({ catalog: fakeCatalog(fake) }));

/** A WebSocket handshake as Codex opens it; resolves with what came back. */
function openWebSocket(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(path, sdk.gw.url);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'openai-beta': 'responses_websockets=2026-02-06',
        ...headers,
      },
    });
    req.on('upgrade', () => reject(new Error('the gateway switched protocols')));
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Responses over WebSocket (Codex with supports_websockets)', () => {
  it('is answered 426 in the Responses error shape with a request id, and nothing reaches an upstream', async () => {
    const r = await openWebSocket('/v1/responses', { authorization: `Bearer ${sdk.gw.key}` });
    expect(r.status).toBe(426);
    expect(r.headers['x-request-id']).toMatch(/^req_/);
    expect(JSON.parse(r.body)).toEqual({
      error: { type: 'invalid_request_error', code: 'websocket_not_supported', param: null, message: expect.stringContaining('POST /v1/responses') },
    });
    expect(sdk.fake.requests).toEqual([]);
  });

  it('a plain GET /v1/responses is still a 405, and POST still serves', async () => {
    const res = await fetch(`${sdk.gw.url}/v1/responses`, { headers: { authorization: `Bearer ${sdk.gw.key}` } });
    expect(res.status).toBe(405);
    const answer = await sdk.openai.responses.create({ model: 'up-openai', input: 'Hi' });
    expect(answer.status).toBe('completed');
  });
});
