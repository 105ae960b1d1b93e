/**
 * Credentials never reach a client nor the gateway's log: an upstream whose error body quotes the credentials it was
 * sent (the provider key from api_key_env) is relayed with them replaced, in every protocol,
 * streamed or not.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import { bedrockCatalogDocument, TEST_AWS_CREDENTIALS, useTestAwsCredentials } from '../support/bedrock-catalog.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { vertexCatalogDocument } from '../support/vertex-catalog.js';
import { startFakeGateway, type FakeGateway } from '../support/gateway.js';
import { CLIENT_PROTOCOLS, post, sampleBody } from '../integration/cross-support.js';
import { captureLine } from '../support/log-capture.js';

const PROVIDER_KEY = 'sk-provider-secret-0123456789abcdef';
let started: FakeGateway;
type CatalogDocument = { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };

beforeAll(async () => {
  started = await startFakeGateway((f) => ({ catalog: buildCatalog(fakeCatalogDocument(f, { maxRetries: 0 }), { [FAKE_KEY_ENV]: PROVIDER_KEY }) }));
});
afterAll(async () => started?.close());

describe('an upstream echoing its credentials', () => {
  for (const protocol of CLIENT_PROTOCOLS) {
    for (const stream of [false, true]) {
      it(`${protocol}${stream ? ' (stream)' : ''}: the provider key is replaced in the error the client gets`, async () => {
        const { fake, gw } = started;
        fake.reset();
        // 400: not retried, not a fallback: the upstream's message reaches the client as it is.
        fake.setScenario({ status: 400, echoCredentials: true });
        const model = protocol === 'messages' ? 'up-anthropic' : 'up-openai';
        const a = await post(gw.url, gw.key, protocol, sampleBody(protocol, model, stream));
        const sent = fake.requests.at(-1)!;
        // The fake did receive the key and quoted it.
        expect(JSON.stringify(sent.headers)).toContain(PROVIDER_KEY);
        expect(a.status).toBe(400);
        expect(a.text).toContain('[redacted]');
        expect(a.text).not.toContain(PROVIDER_KEY);
      });
    }
  }
});

/**
 * The gateway's own log: every error path an upstream can provoke (statuses that are passed on,
 * retried or fallen back from, broken and cut streams), each with an upstream that quotes the
 * credentials it was sent (headers written out, the URL with the key as `?key=`, the header object
 * as JSON), on every kind of upstream credential (a provider key as bearer, x-api-key and
 * x-goog-api-key; Vertex's OAuth token and a service account the token endpoint refuses; Bedrock's
 * SigV4 signature and session token), plus refused client and admin keys and a client key in the
 * query string, on every protocol, streamed and not; then every line written is scanned for every
 * key and token. The lines are also copied to the run's capture, which the whole run's scan reads.
 */
describe('the log of a gateway whose upstream echoes credentials', () => {
  const lines: string[] = [];
  let logged: FakeGateway;
  let restoreAws: () => void;
  const ADMIN_KEY_SECRET = 'sk-admin-test';
  beforeAll(async () => {
    restoreAws = useTestAwsCredentials();
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        captureLine(String(chunk));
        done();
      },
    });
    logged = await startFakeGateway(
      (f) => {
        const doc = fakeCatalogDocument(f, { maxRetries: 1, timeouts: { first_byte_ms: 500, idle_ms: 500, response_ms: 1_000 } as Record<string, number> }) as CatalogDocument;
        doc.providers['up-gemini'] = { type: 'gemini', base_url: `${f.url}/v1beta`, api_key_env: FAKE_KEY_ENV, max_retries: 0, timeouts: { first_byte_ms: 500, idle_ms: 500 } };
        doc.models.push({ id: 'gm', provider: 'up-gemini', upstream_model: 'gemini-2.5-flash', free: true });
        return {
          catalog: buildCatalog(bedrockCatalogDocument(f, vertexCatalogDocument(f, doc)), { [FAKE_KEY_ENV]: PROVIDER_KEY }),
          logLevel: 'debug',
          logDestination: sink,
          requestLogDestination: sink,
        };
      },
      { awsCredentials: TEST_AWS_CREDENTIALS },
    );
  });
  afterAll(async () => {
    await logged?.close();
    restoreAws?.();
  });

  const SCENARIOS: Array<Record<string, unknown>> = [
    { status: 400, echoCredentials: true },
    { status: 401, echoCredentials: true },
    { status: 403, echoCredentials: true },
    { status: 404, echoCredentials: true },
    { status: 429, echoCredentials: true, retryAfter: 0 },
    { status: 500, echoCredentials: true },
    { status: 503, echoCredentials: true, retryAfter: 0 },
    { words: 20, malformed: 2 },
    { words: 20, resetAfterEvents: 2 },
    { words: 20, hangAfterEvents: 2 },
  ];
  /** Upstreams whose credential is not a key in a header: Gemini's x-goog-api-key, Vertex's OAuth token, Bedrock's SigV4 (InvokeModel and Converse). */
  const OTHER_UPSTREAMS = ['gm', 'vc', 'vg', 'bd', 'bdc'];

  it('has no provider key, client key, admin key or bearer token in any line', async () => {
    const { fake, gw } = logged;
    const reached = new Set<string>();
    for (const scenario of SCENARIOS) {
      for (const r of fake.requests) reached.add(r.path);
      fake.reset();
      fake.setScenario(scenario);
      for (const protocol of CLIENT_PROTOCOLS) {
        for (const stream of [false, true]) {
          await post(gw.url, gw.key, protocol, sampleBody(protocol, protocol === 'messages' ? 'up-anthropic' : 'up-openai', stream));
        }
      }
      // The broken and cut streams are the transport's, the same for every upstream: shown above.
      if (scenario.echoCredentials) for (const model of OTHER_UPSTREAMS) {
        for (const stream of [false, true]) await post(gw.url, gw.key, 'chat', sampleBody('chat', model, stream));
      }
    }
    // The token endpoint refuses a service account it does not know.
    for (const r of fake.requests) reached.add(r.path);
    fake.reset();
    await post(gw.url, gw.key, 'chat', sampleBody('chat', 'vc-untrusted', false));
    // Refused credentials: a client key that does not exist, the admin key on a client route, a wrong
    // admin key, a client key in the query string (as Google's SDKs send `?key=`).
    await post(gw.url, `${gw.key.slice(0, -4)}0000`, 'chat', sampleBody('chat', 'up-openai', false));
    await post(gw.url, ADMIN_KEY_SECRET, 'chat', sampleBody('chat', 'up-openai', false));
    await fetch(`${gw.url}/admin/accounts`, { headers: { authorization: `Bearer ${gw.key}` } });
    await fetch(`${gw.url}/v1/chat/completions?key=${gw.key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await gw.gateway.ledger.settled();
    const text = lines.join('\n');
    const failed = lines.filter((l) => /"msg":"request failed"/.test(l)).length;
    const redacted = lines.filter((l) => l.includes('[redacted]')).length;
    console.log(`${lines.length} log lines, ${failed} 'request failed', ${redacted} with [redacted]`);
    const aws = [TEST_AWS_CREDENTIALS.accessKeyId, TEST_AWS_CREDENTIALS.secretAccessKey, TEST_AWS_CREDENTIALS.sessionToken];
    for (const secret of [PROVIDER_KEY, gw.key, gw.key.slice(0, -4), ADMIN_KEY_SECRET, ...aws]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/Bearer (?!\[redacted\])\S{8,}/);
    expect(text).not.toMatch(/sk-(?:sy|provider|admin)-/);
    expect(text).not.toMatch(/[?&]key=(?!\[redacted\])/);
    expect(text).not.toMatch(/eyJ[\w-]+\.eyJ/);
    // The run did provoke what it scans for: errors were logged with the upstream's echo in them,
    // from every kind of upstream.
    expect(failed).toBeGreaterThan(0);
    expect(redacted).toBeGreaterThan(0);
    const paths = [...reached].join(' ');
    for (const upstream of ['/v1/chat/completions', '/v1/messages', ':generateContent', 'publishers/anthropic', 'publishers/google', '/invoke', '/converse']) expect(paths).toContain(upstream);
  }, 300_000);
});
