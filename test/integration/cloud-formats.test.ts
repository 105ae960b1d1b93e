/**
 * Claude's cloud formats through the real server, driven by Anthropic's own Bedrock and Vertex
 * SDKs pointed at the gateway (as Claude Code does with CLAUDE_CODE_USE_BEDROCK / _VERTEX and a
 * base URL): Bedrock's InvokeModel and its binary event stream, Vertex's rawPredict,
 * streamRawPredict and count-tokens, each served by the same pipeline and billed like /v1/messages,
 * with errors in each format's own shape. The gateway's key authenticates (a bearer token).
 */
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/util/tokenizer.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors } from '../support/stream-checks.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

const bedrock = (key = gw.key) =>
  new AnthropicBedrock({ baseURL: gw.url, awsRegion: 'us-east-1', skipAuth: true, defaultHeaders: { authorization: `Bearer ${key}` }, maxRetries: 0 });
/** The Vertex SDK sends a Google OAuth token; here the token is the gateway key (as Claude Code's CLAUDE_CODE_SKIP_VERTEX_AUTH with ANTHROPIC_AUTH_TOKEN does). */
function vertex(key = gw.key) {
  const authClient = new OAuth2Client();
  authClient.setCredentials({ access_token: key, expiry_date: Date.now() + 3_600_000 });
  // The SDK carries its own copy of google-auth-library (a major behind ours): the same class, another type.
  return new AnthropicVertex({ baseURL: `${gw.url}/v1`, region: 'us-east5', projectId: 'acme-project', authClient: authClient as never, maxRetries: 0 });
}

const hello = [{ role: 'user' as const, content: 'Hello there, cloud client' }];
const textOf = (m: { content: Array<{ type: string; text?: string }> }) => m.content.flatMap((b) => (b.type === 'text' ? [b.text!] : [])).join('');

async function lastUsage() {
  const [record] = await gw.ledger.usageRecords(gw.accountId, 1);
  return record;
}

describe('Bedrock format (InvokeModel)', () => {
  it('answers a whole message, billed like /v1/messages', async () => {
    const msg = await bedrock().messages.create({ model: 'local-haiku', max_tokens: 500, messages: hello });
    expect(await bodyErrors('bedrockInvokeModel', 200, msg)).toEqual([]);
    expect(msg.model).toBe('local-haiku');
    expect(textOf(msg)).toContain('Hello there, cloud client');
    const record = await lastUsage();
    expect(record.modelServed).toBe('local-haiku');
    expect(record.tokens.output).toBe(BigInt(msg.usage.output_tokens));
    expect(record.cost).toBeGreaterThan(0n);
  });

  it('streams thinking and text in the binary event stream, to the last event', async () => {
    const stream = bedrock().messages.stream({
      model: 'local-sonnet',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: hello,
    });
    const final = await stream.finalMessage();
    expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(countTokens(textOf(final)));
    expect((await lastUsage()).tokens.output).toBe(BigInt(final.usage.output_tokens));
  });

  it('calls a tool', async () => {
    const msg = await bedrock().messages.create({
      model: 'local-sonnet',
      max_tokens: 500,
      tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    });
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather' });
  });

  it("takes a Bedrock model id naming a catalog model (inference-profile prefix, vendor and version dropped)", async () => {
    const res = await fetch(`${gw.url}/model/${encodeURIComponent('us.anthropic.local-haiku-v1:0')}/invoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: hello }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-amzn-requestid')).toMatch(/^req_/);
    expect(((await res.json()) as { model: string }).model).toBe('local-haiku');
  });

  it('answers errors in Bedrock\'s shape, with the type in x-amzn-errortype', async () => {
    const unknown = await fetch(`${gw.url}/model/no-such-model/invoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: hello }),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-amzn-errortype')).toBe('ResourceNotFoundException');
    const body = await unknown.json();
    expect(body).toEqual({ message: expect.stringContaining('no-such-model') });
    expect(await bodyErrors('bedrockInvokeModel', 404, body)).toEqual([]);

    const anonymous = await fetch(`${gw.url}/model/local-haiku/invoke-with-response-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: hello }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-amzn-errortype')).toBe('UnrecognizedClientException');
    expect(anonymous.headers.get('x-request-id')).toMatch(/^req_/);

    await expect(bedrock('sk-sy-not-a-key').messages.create({ model: 'local-haiku', max_tokens: 10, messages: hello })).rejects.toMatchObject({ status: 401 });
  });

  it('frames every event as a chunk whose bytes are the Anthropic event, with valid CRCs', async () => {
    const res = await fetch(`${gw.url}/model/local-haiku/invoke-with-response-stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: hello }),
    });
    expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const types: string[] = [];
    for (let at = 0; at < bytes.length; ) {
      const length = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0);
      const message = codec.decode(bytes.subarray(at, at + length)); // throws on a bad CRC
      expect(message.headers[':event-type'].value).toBe('chunk');
      const payload = JSON.parse(toUtf8(message.body)) as { bytes: string };
      types.push((JSON.parse(Buffer.from(payload.bytes, 'base64').toString()) as { type: string }).type);
      at += length;
    }
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types).not.toContain('ping');
  });
});

describe('Vertex format (rawPredict)', () => {
  it('answers a whole message and streams one, billed like /v1/messages', async () => {
    const msg = await vertex().messages.create({ model: 'local-haiku', max_tokens: 500, messages: hello });
    expect(await bodyErrors('vertexRawPredict', 200, msg)).toEqual([]);
    expect(textOf(msg)).toContain('Hello there, cloud client');
    expect((await lastUsage()).tokens.output).toBe(BigInt(msg.usage.output_tokens));

    const final = await vertex()
      .messages.stream({ model: 'local-sonnet', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: hello })
      .finalMessage();
    expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(final.stop_reason).toBe('end_turn');
  });

  it('counts tokens', async () => {
    const counted = await vertex().messages.countTokens({ model: 'local-haiku', messages: hello });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });

  it("answers errors in Anthropic's shape", async () => {
    await expect(vertex().messages.create({ model: 'no-such-model', max_tokens: 10, messages: hello })).rejects.toMatchObject({
      status: 404,
      error: { type: 'error', error: { type: 'not_found_error' } },
    });
    await expect(vertex('sk-sy-not-a-key').messages.create({ model: 'local-haiku', max_tokens: 10, messages: hello })).rejects.toMatchObject({ status: 401 });
  });
});
