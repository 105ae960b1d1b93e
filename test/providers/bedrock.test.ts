/**
 * The Bedrock provider over real HTTP against the fake upstream speaking Bedrock (binary event
 * stream, SigV4 checked and, with the test credentials, verified): InvokeModel for Anthropic
 * models streamed and not, the body it sends, Bedrock's errors and in-stream exceptions as typed
 * GatewayErrors, and every recorded InvokeModel transcript of the reference folder (when present).
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayError, type Message, type Request, type UpstreamEvent } from '../../src/ir/index.js';
import { bedrockProvider } from '../../src/providers/bedrock/index.js';
import { encodeInvokeRequest } from '../../src/providers/bedrock/encode-request.js';
import { resetCredentialChains, sigV4Signer } from '../../src/providers/bedrock/sign-request.js';
import { closeAgents } from '../../src/providers/transport/index.js';
import type { ProviderConfig } from '../../src/providers/types.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { REFERENCE_PRESENT, reportSkippedWithoutReference } from '../support/reference.js';
import { TRANSCRIPTS, assertWellFormed, baseRequest, collect, drainSettled, makeCall } from './helpers.js';

const CREDENTIALS = { accessKeyId: 'AKIASWITCHYARDTEST01', secretAccessKey: 'switchyard/test/secret/key/0123456789abcdef', sessionToken: 'switchyard-session-token' };
const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const saved: Record<string, string | undefined> = {};
let fake: FakeUpstream;

beforeAll(async () => {
  const env = { AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey, AWS_SESSION_TOKEN: CREDENTIALS.sessionToken, AWS_PROFILE: undefined, AWS_EC2_METADATA_DISABLED: 'true' };
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetCredentialChains();
  fake = await startFakeUpstream({ awsCredentials: CREDENTIALS });
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetCredentialChains();
  await closeAgents();
  await fake.close();
});

let seq = 0;
function bedrockConfig(scenario: string, over: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: `bedrock-test-${seq++}`,
    type: 'bedrock',
    baseUrl: fake.url,
    headers: { 'x-fake-scenario': scenario },
    timeouts: { connectMs: 2_000, firstByteMs: 5_000, idleMs: 5_000, responseMs: 5_000 },
    maxRetries: 0,
    options: { region: 'eu-west-1' },
    ...over,
  };
}

async function run(scenario: string, stream = true, request: Partial<Request> = {}, over: Partial<ProviderConfig> = {}, upstreamModel = MODEL) {
  fake.reset();
  const call = makeCall(bedrockConfig(scenario, over), { request: { stream, ...request }, target: { upstreamModel } });
  return drainSettled(bedrockProvider, call);
}

const eventLine = ({ type, ...rest }: UpstreamEvent) => `${type} ${JSON.stringify(rest)}`;
const authOf = (i = 0) => String(fake.requests[i].headers.authorization);

describe('the Bedrock provider on InvokeModel', () => {
  it('streams text from invoke-with-response-stream, signed with SigV4 for service bedrock in its region', async () => {
    const { events, error } = await run('script:bedrock/invoke-stream-text');
    expect(error).toBeUndefined();
    assertWellFormed(events);
    const req = fake.requests[0];
    expect(req.path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream');
    expect(authOf()).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASWITCHYARDTEST01\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/);
    expect(req.headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
    expect(req.headers.accept).toBe('application/vnd.amazon.eventstream');
    const c = collect(events);
    expect(c.content).toEqual([{ type: 'text', text: 'Switchyard signs every request to Bedrock.' }]);
    expect(c.finish).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(c.usage).toEqual({ input: { noCache: 14, cacheRead: 0, cacheWrite: 0 }, output: { total: 9, reasoning: 0 } });
    expect(c.id).toBe('msg_bdrk_01SwitchyardText');
  });

  it('sends the Messages body with anthropic_version bedrock-2023-05-31 and no model or stream', async () => {
    await run('script:bedrock/invoke-stream-text', true, {
      system: [{ type: 'text', text: 'Be brief.' }],
      maxTokens: 300,
      ext: { anthropic: { fields: { top_k: 5, metadata: { user_id: 'u1' } }, serverTools: [{ type: 'web_search_20250305', name: 'web_search' }] } },
      passHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
    });
    expect(fake.requests[0].body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      top_k: 5,
      max_tokens: 300,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      anthropic_beta: ['interleaved-thinking-2025-05-14'],
    });
  });

  it('asks invoke for a non-streamed call and reads the Anthropic message with parallel tool calls', async () => {
    const { events } = await run('script:bedrock/invoke-tool-use-parallel', false);
    expect(fake.requests[0].path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
    expect(fake.requests[0].headers.accept).toBe('application/json');
    const c = collect(events);
    expect(c.content.filter((p) => p.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'toolu_bdrk_01Weather', name: 'get_weather', arguments: '{"location":"Paris"}' },
      { type: 'tool-call', id: 'toolu_bdrk_01Time', name: 'get_time', arguments: '{}' },
    ]);
    expect(c.finish).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
  });

  it('streams parallel tool calls with split arguments and the cache split of the usage', async () => {
    const { events } = await run('script:bedrock/invoke-stream-tool-use-parallel');
    assertWellFormed(events);
    const c = collect(events);
    expect(c.content).toEqual([
      { type: 'text', text: 'Checking both.' },
      { type: 'tool-call', id: 'toolu_bdrk_01Weather', name: 'get_weather', arguments: '{"location": "Paris"}' },
      { type: 'tool-call', id: 'toolu_bdrk_01Time', name: 'get_time', arguments: '{}' },
    ]);
    expect(c.usage).toEqual({ input: { noCache: 50, cacheRead: 100, cacheWrite: 20 }, output: { total: 42, reasoning: 0 } });
  });

  it('streams signed thinking whose signature goes back to Bedrock byte for byte', async () => {
    const { events } = await run('script:bedrock/invoke-stream-thinking', true, { reasoning: { enabled: true, budgetTokens: 2048 }, maxTokens: 4096 });
    expect(events.map(eventLine)).toMatchSnapshot();
    expect(fake.requests[0].body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 });
    const answer: Message = { role: 'assistant', content: collect(events).content };
    const body = encodeInvokeRequest(baseRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] }, answer] }), makeCall(bedrockConfig('')).target);
    expect((body.messages as Array<{ content: unknown }>)[1].content).toEqual([
      { type: 'thinking', thinking: 'The user asks for the capital of France. It is Paris.', signature: 'EqQBCkgIBRABGAIiQBedrockSignedThinkingForSwitchyardTests+/==' },
      { type: 'text', text: 'The capital of France is Paris.' },
    ]);
  });

  it('sends a Bedrock API key as a bearer token instead of signing', async () => {
    const { error } = await run('script:bedrock/invoke-stream-text', true, {}, { apiKey: 'ABSKbedrock-api-key' });
    expect(error).toBeUndefined();
    expect(authOf()).toBe('Bearer ABSKbedrock-api-key');
    expect(fake.requests[0].headers['x-amz-date']).toBeUndefined();
  });

  it('a signature made with the wrong secret is refused by the fake, which computes it again: a permission error', async () => {
    const secret = process.env.AWS_SECRET_ACCESS_KEY;
    process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
    try {
      const { error } = await run('script:bedrock/invoke-stream-text');
      expect(error).toBeInstanceOf(GatewayError);
      const e = error as GatewayError;
      expect({ status: e.status, code: e.code, retryable: e.retryable }).toEqual({ status: 401, code: 'InvalidSignatureException', retryable: false });
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = secret;
    }
  });

  it("signs with a named profile's credentials from the shared files (options.profile), not the environment's", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'swy-aws-'));
    const file = path.join(dir, 'credentials');
    writeFileSync(file, `[prod]\naws_access_key_id = ${CREDENTIALS.accessKeyId}\naws_secret_access_key = ${CREDENTIALS.secretAccessKey}\naws_session_token = ${CREDENTIALS.sessionToken}\n`);
    const env = { AWS_SHARED_CREDENTIALS_FILE: file, AWS_CONFIG_FILE: path.join(dir, 'config'), AWS_SECRET_ACCESS_KEY: 'the-environment-is-not-used' };
    const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    // Both a profile and static keys in the environment: the AWS SDK warns (once per process) that
    // it takes the profile, which is what this test checks. The warning is expected, not shown.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const { error } = await run('script:bedrock/invoke-stream-text', true, {}, { options: { region: 'eu-west-1', profile: 'prod' } });
      expect(error).toBeUndefined();
      expect(authOf()).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASWITCHYARDTEST01\//);
      for (const [message] of warn.mock.calls) expect(String(message)).toMatch(/Multiple credential sources detected/);
    } finally {
      warn.mockRestore();
      for (const [k, v] of Object.entries(before)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('without credentials anywhere, the call fails as the gateway\'s own 500 before any request', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'swy-aws-'));
    const keys = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE'];
    const before = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
    for (const k of keys.slice(0, 3)) delete process.env[k];
    process.env.AWS_SHARED_CREDENTIALS_FILE = path.join(dir, 'none');
    process.env.AWS_CONFIG_FILE = path.join(dir, 'none');
    try {
      const { error } = await run('script:bedrock/invoke-stream-text');
      const e = error as GatewayError;
      expect({ status: e.status, code: e.code, retryable: e.retryable }).toEqual({ status: 500, code: 'credentials_unavailable', retryable: false });
      expect(e.message).toMatch(/^no AWS credentials for Bedrock/);
      expect(fake.requests).toHaveLength(0);
    } finally {
      for (const [k, v] of Object.entries(before)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('the signature covers the exact body bytes, the escaped model path and the host', async () => {
    const sign = sigV4Signer(bedrockConfig(''), () => new Date('2026-11-26T23:30:00Z'));
    const request = { url: 'https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-v2%3A1/invoke', headers: { 'content-type': 'application/json' }, body: '{"a":1}' };
    const one = await sign(request);
    expect(one['x-amz-date']).toBe('20261126T233000Z');
    expect(one.authorization).toMatch(/Credential=AKIASWITCHYARDTEST01\/20261126\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, /);
    expect((await sign({ ...request, body: '{"a":2}' })).authorization).not.toBe(one.authorization);
    expect((await sign({ ...request, url: request.url.replace('%3A1', '%3A2') })).authorization).not.toBe(one.authorization);
    expect((await sign(request)).authorization).toBe(one.authorization);
  });

  it.each([
    ['script:bedrock/error-429-throttling', 429, 'rate_limit', true, 'ThrottlingException'],
    ['script:bedrock/error-400-validation', 400, 'invalid_request', false, 'ValidationException'],
    ['script:bedrock/error-403-access-denied', 403, 'permission', false, 'AccessDeniedException'],
    ['script:bedrock/error-424-model-error', 502, 'bad_gateway', true, 'ModelErrorException'],
    ['status:404', 404, 'not_found', false, 'ResourceNotFoundException'],
    ['status:503', 503, 'unavailable', true, 'ServiceUnavailableException'],
    ['status:500', 500, 'api_error', true, 'InternalServerException'],
  ])('maps %s to a typed error', async (scenario, status, kind, retryable, code) => {
    const { error } = await run(scenario);
    expect(error).toBeInstanceOf(GatewayError);
    const e = error as GatewayError;
    expect({ status: e.status, kind: e.kind, retryable: e.retryable, code: e.code }).toEqual({ status, kind, retryable, code });
  });

  it('a 429 ThrottlingException is retried with the retry-after, then succeeds', async () => {
    const { events, error } = await run('{"status":429,"failTimes":1,"retryAfter":0}', true, {}, { maxRetries: 1 });
    expect(error).toBeUndefined();
    expect(fake.requests).toHaveLength(2);
    expect(collect(events).finish?.unified).toBe('stop');
    // Each try is signed again.
    expect(authOf(0)).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(authOf(1)).toMatch(/^AWS4-HMAC-SHA256 /);
  });

  it('an exception frame after output is a typed error after the text it followed', async () => {
    const { events, error } = await run('script:bedrock/invoke-stream-exception');
    expect(events.map((e) => e.type)).toEqual(['start', 'text-start', 'text-delta']);
    const e = error as GatewayError;
    expect(e).toBeInstanceOf(GatewayError);
    expect({ status: e.status, kind: e.kind, retryable: e.retryable, code: e.code, message: e.message }).toEqual({
      status: 502, kind: 'bad_gateway', retryable: true, code: 'ModelStreamErrorException', message: 'Model stream error: the model stopped responding.',
    });
  });

  it('a throttlingException frame before any output is a retryable rate limit', async () => {
    const { events, error } = await run('script:bedrock/invoke-stream-throttled');
    expect(events).toEqual([]);
    const e = error as GatewayError;
    expect({ status: e.status, kind: e.kind, retryable: e.retryable, code: e.code }).toEqual({ status: 429, kind: 'rate_limit', retryable: true, code: 'ThrottlingException' });
  });

  it('a frame with a bad CRC is a bad_gateway error', async () => {
    const { error } = await run('script:bedrock/invoke-stream-text?malformed=2');
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).kind).toBe('bad_gateway');
    expect((error as GatewayError).message).toMatch(/malformed event stream/);
  });

  it('a stream that goes silent is an idle timeout; a connection reset mid-stream a connection error', async () => {
    const idle = await run('script:bedrock/invoke-stream-text?hangAfterEvents=3', true, {}, { timeouts: { connectMs: 2_000, firstByteMs: 5_000, idleMs: 300, responseMs: 5_000 } });
    expect(idle.events.map((e) => e.type)).toEqual(['start', 'text-start', 'text-delta']);
    expect({ kind: (idle.error as GatewayError).kind, code: (idle.error as GatewayError).code }).toEqual({ kind: 'timeout', code: 'idle_timeout' });
    const reset = await run('script:bedrock/invoke-stream-text?resetAfterEvents=3');
    expect({ kind: (reset.error as GatewayError).kind, code: (reset.error as GatewayError).code }).toEqual({ kind: 'unavailable', code: 'connection_error' });
  });

  it('a stream cut mid-frame is an error, never a finish', async () => {
    const { error } = await run('script:bedrock/invoke-stream-text?endAfterEvents=4');
    expect((error as GatewayError).kind).toBe('bad_gateway');
  });
});

const NOVA = 'amazon.nova-pro-v1:0';
const converse = (scenario: string, stream = true, request: Partial<Request> = {}, model = NOVA, over: Partial<ProviderConfig> = {}) => run(scenario, stream, request, over, model);

describe('the Bedrock provider on Converse', () => {
  it('calls converse-stream for a model that is not Anthropic, and reads text blocks that have no start', async () => {
    const { events, error } = await converse('script:bedrock/converse-stream-text', true, { system: [{ type: 'text', text: 'Be brief.' }], temperature: 0.2, stopSequences: ['END'] });
    expect(error).toBeUndefined();
    assertWellFormed(events);
    expect(fake.requests[0].path).toBe('/model/amazon.nova-pro-v1%3A0/converse-stream');
    expect(fake.requests[0].body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hello' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 1024, temperature: 0.2, stopSequences: ['END'] },
    });
    const c = collect(events);
    expect(c.content).toEqual([{ type: 'text', text: 'Switchyard speaks Converse too.' }]);
    expect(c.finish).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(c.usage).toEqual({ input: { noCache: 11, cacheRead: 0, cacheWrite: 0 }, output: { total: 6, reasoning: 0 } });
  });

  it('streams parallel tool calls with input fragments; usage (with a cache read) arrives after messageStop', async () => {
    const tools = [{ name: 'get_weather', inputSchema: { type: 'object', properties: { location: { type: 'string' } } } }, { name: 'get_time', inputSchema: { type: 'object' } }];
    const { events } = await converse('script:bedrock/converse-stream-tool-use-parallel', true, { tools, toolChoice: { type: 'required' } });
    assertWellFormed(events);
    expect((fake.requests[0].body as any).toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: tools[0].inputSchema } } }, { toolSpec: { name: 'get_time', inputSchema: { json: tools[1].inputSchema } } }],
      toolChoice: { any: {} },
    });
    const c = collect(events);
    expect(c.content.filter((p) => p.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'tooluse_Weather01', name: 'get_weather', arguments: '{"location": "Paris"}' },
      { type: 'tool-call', id: 'tooluse_Time02', name: 'get_time', arguments: '{}' },
    ]);
    expect(c.finish).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(c.usage).toEqual({ input: { noCache: 20, cacheRead: 1000, cacheWrite: 0 }, output: { total: 40, reasoning: 0 } });
  });

  it('asks Claude on Converse (options.api) for thinking in additionalModelRequestFields, and sends signed reasoning back', async () => {
    const over = { options: { region: 'eu-west-1', api: 'converse' } };
    const { events } = await converse('script:bedrock/converse-stream-reasoning', true, { reasoning: { enabled: true, budgetTokens: 2048 }, maxTokens: 4096 }, MODEL, over);
    expect(fake.requests[0].path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream');
    expect((fake.requests[0].body as any).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(events.map(eventLine)).toMatchSnapshot();
    const answer: Message = { role: 'assistant', content: collect(events).content };
    await converse('script:bedrock/converse-stream-text', true, { messages: [{ role: 'user', content: [{ type: 'text', text: 'Capital?' }] }, answer, { role: 'user', content: [{ type: 'text', text: 'Thanks' }] }] }, MODEL, over);
    expect((fake.requests[0].body as any).messages[1]).toEqual({ role: 'assistant', content: [
      { reasoningContent: { reasoningText: { text: 'The user asks for the capital of France. It is Paris.', signature: 'EqQBCkgIBRABGAIiQConverseSignedThinkingForSwitchyard+/==' } } },
      { text: 'The capital of France is Paris.' },
    ] });
  });

  it("carries a messages client's own fields and betas to Claude in additionalModelRequestFields, never to other models", async () => {
    const over = { options: { region: 'eu-west-1', api: 'converse' } };
    const request = { ext: { anthropic: { fields: { top_k: 5, metadata: { user_id: 'u1' } } } }, passHeaders: { 'anthropic-beta': 'context-1m-2025-08-07' } };
    await converse('script:bedrock/converse-stream-text', true, request, MODEL, over);
    expect((fake.requests[0].body as any).additionalModelRequestFields).toEqual({ top_k: 5, anthropic_beta: ['context-1m-2025-08-07'] });
    await converse('script:bedrock/converse-stream-text', true, request);
    expect(fake.requests[0].body).not.toHaveProperty('additionalModelRequestFields');
  });

  it('a non-streamed call goes to converse and reads toolUse (with its newer type field)', async () => {
    const { events } = await converse('script:bedrock/converse-tool-use', false);
    expect(fake.requests[0].path).toBe('/model/amazon.nova-pro-v1%3A0/converse');
    const c = collect(events);
    expect(c.content).toEqual([{ type: 'text', text: 'Checking.' }, { type: 'tool-call', id: 'tooluse_Weather01', name: 'get_weather', arguments: '{"location":"Paris"}' }]);
    expect(c.usage.output.total).toBe(30);
  });

  it('sends tool results and images in Converse blocks', async () => {
    await converse('script:bedrock/converse-stream-text', true, {
      tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } }] },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'tooluse_1', name: 'get_weather', arguments: '{"location":"Paris"}' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'tooluse_1', content: [{ type: 'text', text: 'rain' }], isError: true }] },
      ],
    });
    expect((fake.requests[0].body as any).messages).toEqual([
      { role: 'user', content: [{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { location: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'rain' }], status: 'error' } }] },
    ]);
  });

  it('generated answers (words) come in Converse frames, streamed and whole', async () => {
    const streamed = await converse('words:5', true);
    expect(collect(streamed.events).content).toEqual([{ type: 'text', text: 'Switchyard routes tokens through many' }]);
    const whole = await converse('words:3', false);
    expect(collect(whole.events).content).toEqual([{ type: 'text', text: 'Switchyard routes tokens' }]);
  });

  it('an exception frame after text is a typed error after the text', async () => {
    const { events, error } = await converse('script:bedrock/converse-stream-exception');
    expect(events.map((e) => e.type)).toEqual(['start', 'text-start', 'text-delta']);
    const e = error as GatewayError;
    expect({ status: e.status, kind: e.kind, retryable: e.retryable, code: e.code }).toEqual({ status: 429, kind: 'rate_limit', retryable: true, code: 'ThrottlingException' });
  });
});

reportSkippedWithoutReference('the recorded Bedrock transcripts replayed by the Bedrock provider');
describe.skipIf(!REFERENCE_PRESENT)('the Bedrock provider replays every recorded InvokeModel and Converse transcript over HTTP', () => {
  const dir = path.join(TRANSCRIPTS, 'bedrock');
  const files = REFERENCE_PRESENT ? readdirSync(dir).filter((f) => /^(invoke|converse)-/.test(f) && !f.endsWith('.request.json')).sort() : [];
  it.each(files)('%s', async (file) => {
    const model = file.startsWith('converse-') ? 'us.anthropic.claude-sonnet-4-20250514-v1:0' : MODEL;
    const over = file.startsWith('converse-') ? { options: { region: 'eu-west-1', api: 'converse' } } : {};
    const { events, error } = await run(`transcript:bedrock/${file}`, !file.endsWith('.json'), {}, over, model);
    expect(error).toBeUndefined();
    assertWellFormed(events);
    // One file per recording, beside the others' snapshots: without the reference folder these
    // tests are not registered, and entries in this file's .snap would read as obsolete.
    await expect(`${events.map(eventLine).join('\n')}\n`).toMatchFileSnapshot(`./__snapshots__/bedrock-transcripts/${file}.txt`);
  });

  it('error-400-validation.json: the type from x-amzn-errortype', async () => {
    const { error } = await run('transcript:bedrock/error-400-validation.json');
    const e = error as GatewayError;
    expect({ status: e.status, code: e.code, message: e.message }).toEqual({ status: 400, code: 'ValidationException', message: 'The provided model identifier is invalid.' });
  });
});
