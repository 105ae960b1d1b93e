/**
 * Credentials never reach a client: an upstream whose error body quotes the credentials it was
 * sent (the provider key from api_key_env) is relayed with them replaced, in every protocol,
 * streamed or not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { startFakeGateway, type FakeGateway } from '../support/gateway.js';
import { CLIENT_PROTOCOLS, post, sampleBody } from '../integration/cross-support.js';

const PROVIDER_KEY = 'sk-provider-secret-0123456789abcdef';
let started: FakeGateway;

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
