/**
 * The Vertex AI providers (Anthropic's models and Gemini on Vertex) over real HTTP against the
 * fake upstream, which speaks both Vertex routes and Google's OAuth token endpoint: the URLs and
 * bodies sent, the service account's access token (got from the token endpoint with a signed
 * assertion, cached, refreshed), token failures and Vertex's errors as typed GatewayErrors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError, type Request } from '../../src/ir/index.js';
import { closeAgents } from '../../src/providers/transport/index.js';
import type { Provider, ProviderConfig } from '../../src/providers/types.js';
import { geminiUrl } from '../../src/providers/vertex/api.js';
import { vertexAnthropicProvider, vertexGeminiProvider } from '../../src/providers/vertex/index.js';
import { vertexOptions } from '../../src/providers/vertex/options.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { writeServiceAccount, type ServiceAccount } from '../support/google-service-account.js';
import { REFERENCE_PRESENT, reportSkippedWithoutReference } from '../support/reference.js';
import { assertWellFormed, collect, drainSettled, makeCall } from './helpers.js';

let fake: FakeUpstream;
let account: ServiceAccount;
beforeAll(async () => {
  fake = await startFakeUpstream();
  account = writeServiceAccount(`${fake.url}/oauth2/token`, { projectId: 'switchyard-test' });
});
beforeEach(() => {
  fake.reset();
  fake.setOAuth({ publicKey: account.publicKey });
});
afterAll(async () => {
  await closeAgents();
  await fake.close();
});

let seq = 0;
/** A provider config as the config loader builds it (options through the kind's own build). */
function vertexConfig(type: string, scenario: string, raw: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): ProviderConfig {
  return {
    id: `vertex-test-${seq++}`,
    type,
    baseUrl: `${fake.url}/v1`,
    headers: { 'x-fake-scenario': scenario },
    timeouts: { connectMs: 2_000, firstByteMs: 5_000, idleMs: 5_000, responseMs: 5_000 },
    maxRetries: 0,
    options: vertexOptions.build!({ location: 'us-east5', credentials_file: account.file, ...raw }, env),
  };
}

function run(provider: Provider, config: ProviderConfig, model: string, request: Partial<Request> = {}) {
  return drainSettled(provider, makeCall(config, { request, target: { upstreamModel: model } }));
}

const claude = (scenario: string, request: Partial<Request> = {}, config = vertexConfig('vertex-anthropic', scenario)) => run(vertexAnthropicProvider, config, 'claude-sonnet-4-5@20250929', request);
const gemini = (scenario: string, request: Partial<Request> = {}, config = vertexConfig('vertex-gemini', scenario)) => run(vertexGeminiProvider, config, 'gemini-2.5-flash', request);
const PROJECT_PATH = '/v1/projects/switchyard-test/locations/us-east5/publishers';

describe('Anthropic models on Vertex', () => {
  it('stream from streamRawPredict: the Messages body without model, anthropic_version in the body, a bearer token', async () => {
    const { events, error } = await claude('script:anthropic-messages/stream-thinking', { reasoning: { enabled: true, budgetTokens: 2048 }, passHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } });
    expect(error).toBeUndefined();
    assertWellFormed(events);
    const req = fake.requests[0];
    expect(req.path).toBe(`${PROJECT_PATH}/anthropic/models/claude-sonnet-4-5%4020250929:streamRawPredict`);
    expect(req.body).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 1024,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
      stream: true,
    });
    expect(req.headers['anthropic-version']).toBeUndefined();
    expect(req.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(req.headers['x-api-key']).toBeUndefined();
    expect(req.headers.authorization).toBe(`Bearer ${fake.tokenRequests[0].token}`);
    expect(fake.tokenRequests[0].claims).toMatchObject({ iss: account.clientEmail, scope: 'https://www.googleapis.com/auth/cloud-platform' });
    const c = collect(events);
    expect(c.content.map((p) => p.type)).toEqual(['reasoning', 'text']);
    expect(c.content[0]).toMatchObject({ origin: { provider: 'anthropic' } });
    expect(c.content[0]).toHaveProperty('signature');
  });

  it('a non-streamed call goes to rawPredict and decodes the whole message', async () => {
    const { events, error } = await claude('words:5', { stream: false });
    expect(error).toBeUndefined();
    expect(fake.requests[0].path).toBe(`${PROJECT_PATH}/anthropic/models/claude-sonnet-4-5%4020250929:rawPredict`);
    expect(fake.requests[0].body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: false });
    expect(fake.requests[0].body).not.toHaveProperty('model');
    expect(collect(events).content).toEqual([{ type: 'text', text: expect.stringMatching(/\S/) }]);
  });

  it("an error in Anthropic's shape keeps its type; one in Google's shape keeps its status; both name vertex-anthropic", async () => {
    const overloaded = (await claude('status:529')).error as GatewayError;
    expect(overloaded).toBeInstanceOf(GatewayError);
    expect(overloaded).toMatchObject({ kind: 'overloaded', status: 529, code: 'overloaded_error', retryable: true, retryAfter: 1 });
    expect(overloaded.details).toEqual({ upstream: { provider: 'vertex-anthropic', status: 529 } });
    const exhausted = (await claude('script:google-vertex/error-429-resource-exhausted')).error as GatewayError;
    expect(exhausted).toMatchObject({ kind: 'rate_limit', status: 429, code: 'RESOURCE_EXHAUSTED', retryable: true });
    expect(exhausted.message).toMatch(/^Resource exhausted/);
    const denied = (await claude('script:google-vertex/error-403-permission-denied')).error as GatewayError;
    expect(denied).toMatchObject({ kind: 'permission', status: 403, code: 'PERMISSION_DENIED', retryable: false });
  });
});

describe('Gemini on Vertex', () => {
  it('stream from streamGenerateContent with every content carrying its role, and a bearer token', async () => {
    const request: Partial<Request> = {
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: '18 C' }] }] },
      ],
    };
    const { events, error } = await gemini('script:google-gemini/stream-text', request);
    expect(error).toBeUndefined();
    assertWellFormed(events);
    const req = fake.requests[0];
    expect(req.path).toBe(`${PROJECT_PATH}/google/models/gemini-2.5-flash:streamGenerateContent`);
    expect(req.headers.authorization).toBe(`Bearer ${fake.tokenRequests[0].token}`);
    expect(req.headers['x-goog-api-key']).toBeUndefined();
    const body = req.body as { contents: Array<{ role?: string }>; systemInstruction: unknown };
    expect(body.contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(collect(events).content).toEqual([{ type: 'text', text: 'Switchyard routes every token to Gemini.' }]);
  });

  it('asks for SSE on a stream and generateContent for a whole answer', async () => {
    const config = vertexConfig('vertex-gemini', 'script:google-gemini/generate-thinking');
    expect(geminiUrl(config, 'gemini-2.5-flash', true)).toBe(`${fake.url}${PROJECT_PATH}/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`);
    const { events, error } = await gemini('script:google-gemini/generate-thinking', { stream: false }, config);
    expect(error).toBeUndefined();
    expect(fake.requests[0].path).toBe(`${PROJECT_PATH}/google/models/gemini-2.5-flash:generateContent`);
    expect(collect(events).content.map((p) => p.type)).toEqual(['reasoning', 'reasoning', 'text']);
  });

  it('a blocked prompt is a refusal (Model Armor on Vertex)', async () => {
    const { events } = await gemini('script:google-gemini/generate-prompt-blocked', { stream: false });
    expect(collect(events).finish).toMatchObject({ unified: 'refusal' });
  });

  it("429 RESOURCE_EXHAUSTED is retryable with its retry-after; a stream's error chunk names vertex-gemini", async () => {
    const limited = (await gemini('status:429?retryAfter=7')).error as GatewayError;
    expect(limited).toMatchObject({ kind: 'rate_limit', code: 'RESOURCE_EXHAUSTED', retryable: true, retryAfter: 7 });
    expect(limited.details).toEqual({ upstream: { provider: 'vertex-gemini', status: 429 } });
    const { events, error } = await gemini('script:google-gemini/stream-error-unavailable');
    expect(events.some((e) => e.type === 'text-delta')).toBe(true);
    expect(error).toMatchObject({ kind: 'unavailable', retryable: true, details: { upstream: { provider: 'vertex-gemini', status: 503 } } });
  });
});

reportSkippedWithoutReference('the recorded Vertex Gemini answers replayed by vertex-gemini');
describe.skipIf(!REFERENCE_PRESENT)('Gemini on Vertex replays the recorded Vertex answers (reference folder)', () => {
  it('a 400 INVALID_ARGUMENT from generateContent is an invalid request with Vertex\'s message', async () => {
    const { error } = await gemini('transcript:google-gemini/error-400-vertex-invalid-argument.json', { stream: false });
    expect(error).toMatchObject({ kind: 'invalid_request', status: 400, code: 'INVALID_ARGUMENT', retryable: false, details: { upstream: { provider: 'vertex-gemini', status: 400 } } });
    expect((error as Error).message).toMatch(/^Cannot fetch content from the provided URL/);
  });

  it('a prompt Model Armor blocked (no candidates, Vertex-only fields) is a refusal before any output', async () => {
    const { events, error } = await gemini('transcript:google-gemini/generate-vertex-prompt-blocked.json', { stream: false });
    expect(error).toBeUndefined();
    assertWellFormed(events);
    expect(events.map((e) => e.type)).toEqual(['start', 'finish']);
    expect(collect(events).finish).toEqual({
      unified: 'refusal',
      raw: 'MODEL_ARMOR',
      details: { blockReason: 'MODEL_ARMOR', explanation: 'The prompt violated Prompt Injection and Jailbreak filters.' },
    });
  });
});

describe('access tokens', () => {
  it('are got once and reused while valid', async () => {
    const config = vertexConfig('vertex-gemini', 'script:google-gemini/stream-text');
    await gemini('', {}, config);
    await gemini('', {}, config);
    expect(fake.tokenRequests).toHaveLength(1);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${fake.tokenRequests[0].token}`, `Bearer ${fake.tokenRequests[0].token}`]);
  });

  it('are refreshed when they expire (within the library\'s five minutes ahead)', async () => {
    fake.setOAuth({ publicKey: account.publicKey, expiresIn: 60 });
    const config = vertexConfig('vertex-anthropic', 'script:anthropic-messages/stream-text');
    await claude('', {}, config);
    await claude('', {}, config);
    const tokens = fake.tokenRequests.map((t) => t.token);
    expect(tokens).toHaveLength(2);
    expect(new Set(tokens).size).toBe(2);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(tokens.map((t) => `Bearer ${t}`));
  });

  it('refused by the token endpoint: a 401 that says so, and no model call', async () => {
    const other = writeServiceAccount(`${fake.url}/oauth2/token`, { projectId: 'switchyard-test' });
    fake.setOAuth({ publicKey: other.publicKey });
    const { error } = await claude('script:anthropic-messages/stream-text');
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ kind: 'authentication', status: 401, code: 'google_credentials_rejected', retryable: false });
    expect((error as Error).message).toBe("upstream rejected the gateway's credentials: Google's token endpoint refused them (invalid_grant: Invalid JWT Signature.)");
    expect(fake.requests).toHaveLength(0);
  });

  it('an unreachable token endpoint: a retryable 502', async () => {
    const gone = await startFakeUpstream();
    const unreachable = writeServiceAccount(`${gone.url}/oauth2/token`, { projectId: 'switchyard-test' });
    await gone.close();
    const { error } = await gemini('script:google-gemini/stream-text', {}, vertexConfig('vertex-gemini', 'script:google-gemini/stream-text', { credentials_file: unreachable.file }));
    expect(error).toMatchObject({ kind: 'bad_gateway', status: 502, code: 'google_token_unavailable', retryable: true });
    expect((error as Error).message).toBe('could not get a Google access token for the upstream: the token endpoint could not be reached');
    expect(fake.requests).toHaveLength(0);
  });

  it('a token Vertex refuses (revoked before its expiry) is dropped: the call runs again with a fresh one', async () => {
    const config = vertexConfig('vertex-gemini', 'script:google-gemini/stream-text');
    expect((await gemini('', {}, config)).error).toBeUndefined();
    fake.revokeTokens();
    const { events, error } = await gemini('', {}, config);
    expect(error).toBeUndefined();
    expect(collect(events).content).toEqual([{ type: 'text', text: 'Switchyard routes every token to Gemini.' }]);
    const [first, second] = fake.tokenRequests.map((t) => `Bearer ${t.token}`);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([first, first, second]);
  });

  it("Vertex refusing a fresh token too is its 401: the gateway's credentials, not the client's", async () => {
    const { error } = await gemini('status:401');
    expect(error).toMatchObject({ kind: 'authentication', status: 401, code: 'UNAUTHENTICATED', retryable: false });
    expect((error as Error).message).toBe("upstream rejected the gateway's credentials");
    expect(fake.requests).toHaveLength(2);
    expect(fake.tokenRequests).toHaveLength(2);
  });
});
