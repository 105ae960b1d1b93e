/**
 * Requests built to hurt, through the real HTTP server: each gets an answer in the caller's
 * protocol (never a 500, a hang or a crash) and leaves no hold behind.
 */
import { STATUS_CODES } from 'node:http';
import { connect } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  gw = await startTestGateway();
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => gw?.close());

async function expectNothingHeld(): Promise<void> {
  await gw.ledger.settled();
  expect((await gw.ledger.getAccount(gw.accountId))?.held).toBe(0n);
  expect(await gw.ledger.balanceCheck()).toMatchObject({ ok: true });
}

const post = (path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('tool schemas that ask for the impossible', () => {
  it.each([
    ['a huge array of huge strings', { type: 'array', minItems: 40_000, items: { type: 'string', minLength: 100_000 } }],
    ['nested arrays', { type: 'array', minItems: 500, items: { type: 'array', minItems: 500, items: { type: 'array', minItems: 500, items: { type: 'string' } } } }],
    ['lengths no string can have', { type: 'string', minLength: 2_000_000_000 }],
  ])('%s: a local model answers up to its ceiling, and the server keeps serving', async (_name, a) => {
    const tools = [{ type: 'function' as const, function: { name: 'fill', parameters: { type: 'object', properties: { a } } } }];
    const answer = openai.chat.completions.create({ model: 'local-haiku', max_tokens: 50, tool_choice: 'required', tools, messages: [{ role: 'user', content: 'Go' }] });
    // Another caller is served meanwhile.
    expect((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } })).status).toBe(200);
    const r = await answer;
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage?.completion_tokens).toBe(50);
    await expectNothingHeld();
  });
});

describe('request text quoted in the warnings header', () => {
  // An input item of a type only a Responses upstream takes is dropped with a warning naming its type.
  it.each([true, false])('a lone surrogate in an item type (stream: %s) is escaped, and the run is settled', async (stream) => {
    const res = await post('/v1/responses', {
      model: 'local-haiku',
      stream,
      input: [{ type: 'ab\ud800cd' }, { role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-warnings')).toContain('ab%EF%BF%BDcd');
    await res.text();
    await expectNothingHeld();
  });

  it('a 20 KB item type is cut short in the header; the SDK reads the answer', async () => {
    const { data, response } = await openai.responses
      .create({ model: 'local-haiku', input: [{ type: 'x'.repeat(20_000) } as any, { role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.status).toBe('completed');
    const header = response.headers.get('x-switchyard-warnings')!;
    expect(header.length).toBeLessThanOrEqual(2000);
    expect(header).toMatch(/^input items dropped .*\.\.\.$/);
    await expectNothingHeld();
  });
});

describe('a prompt far past the context window', () => {
  it('is refused with context_length_exceeded once the count passes the window, and holds nothing', async () => {
    let seed = 7;
    const noise = Array.from({ length: 4_000_000 }, () => String.fromCharCode(33 + ((seed = (seed * 48271) % 2147483647) % 90))).join('');
    const res = await post('/v1/chat/completions', { model: 'local-haiku', messages: [{ role: 'user', content: noise }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'context_length_exceeded', message: expect.stringContaining('200000-token context window') } });
    await expectNothingHeld();
  });
});

describe('the admin API and text PostgreSQL cannot store', () => {
  it.each([
    ['POST', '/admin/accounts', { name: 'a\u0000b' }, 'name'],
    ['POST', '/admin/keys', { account_id: 'acct_x', name: 'k\u0000' }, 'name'],
    ['GET', '/admin/accounts/acct%00x', undefined, 'account_id'],
  ])('%s %s with a NUL character is a 400 naming the field', async (method, path, body, param) => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', param } });
  });

  it('a credit whose reason has a NUL character is a 400 and moves no money', async () => {
    const before = await gw.ledger.getAccount(gw.accountId);
    const res = await fetch(`${gw.url}/admin/accounts/${gw.accountId}/credits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 5, reason: 'a\u0000b' }),
    });
    expect(res.status).toBe(400);
    expect((await gw.ledger.getAccount(gw.accountId))?.balance).toBe(before?.balance);
  });
});

describe('HTTP that never becomes a request', () => {
  /** Sends raw bytes and reads what comes back until the server closes. */
  function raw(bytes: string): Promise<string> {
    const { port } = new URL(gw.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
      let got = '';
      socket.setEncoding('utf8');
      socket.on('data', (d) => (got += d));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });
  }

  /** Status line, lower-cased headers and the JSON body of a raw answer. */
  function parseAnswer(answer: string): { statusLine: string; headers: Record<string, string>; body: any } {
    const [head, ...rest] = answer.split('\r\n\r\n');
    const [statusLine, ...lines] = head.split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    return { statusLine, headers, body: JSON.parse(rest.join('\r\n\r\n')) };
  }

  const anthropicShape = (id: string) => ({ type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) }, request_id: id });
  const openaiShape = { error: { type: 'invalid_request_error', message: expect.any(String), param: null, code: null } };

  it.each([
    ['a malformed header name on chat', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', 400, 'openai'],
    ['a malformed header name on messages', 'POST /v1/messages HTTP/1.1\r\nHost: x\r\nBad(Header): 1\r\n\r\n', 400, 'anthropic'],
    ['a malformed header name on Responses', 'POST /v1/responses?x=1 HTTP/1.1\r\nHost: x\r\nBad@Header: 1\r\n\r\n', 400, 'openai'],
    ['a malformed header name on /v1/models from an Anthropic client', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01\r\nBad Header: 1\r\n\r\n', 400, 'anthropic'],
    ['broken chunked encoding on chat', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, 'openai'],
    ['Content-Length and Transfer-Encoding together on messages', 'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'anthropic'],
    ['a 100 KB header on /v1/models', `GET /v1/models HTTP/1.1\r\nHost: x\r\nx-api-key: ${'k'.repeat(100_000)}\r\n\r\n`, 431, 'openai'],
  ])("%s: an error in the route's shape, with a request id", async (_name, bytes, status, shape) => {
    const { statusLine, headers, body } = parseAnswer(await raw(bytes));
    expect(statusLine).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`);
    const id = headers['x-request-id'];
    expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    if (shape === 'anthropic') {
      expect(body).toEqual(anthropicShape(id));
      expect(headers['request-id']).toBe(id);
    } else {
      expect(body).toEqual(openaiShape);
    }
  });
});

describe('bodies the gateway cannot read', () => {
  it('an unsupported Content-Encoding is a 415 naming it', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'content-encoding': 'zstd' },
      body: 'not really zstd',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringMatching(/zstd/i) } });
  });
});
