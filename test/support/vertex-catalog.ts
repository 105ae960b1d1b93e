import { buildCatalog } from '../../src/config/load-config.js';
import type { Catalog } from '../../src/routing/catalog.js';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from './fake-catalog.js';
import { writeServiceAccount } from './google-service-account.js';

/** Where the Vertex models of `vertexCatalog` are, under the fake's `/v1`. */
export const VERTEX_PROJECT_PATH = '/v1/projects/switchyard-test/locations/us-east5/publishers';

/**
 * The fake catalog plus two Vertex providers (base_url the fake's `/v1`, project switchyard-test,
 * location us-east5) whose service account is a fresh key the fake's token endpoint trusts:
 * `up-vertex-claude` (vertex-anthropic) with model `vc` (claude-sonnet-4-5@20250929) and
 * `up-vertex-gemini` (vertex-gemini) with model `vg` (gemini-2.5-flash). `vc-untrusted` is on a
 * third provider whose service account the token endpoint does not know.
 */
export function vertexCatalog(fake: FakeUpstream): Catalog {
  return buildCatalog(vertexCatalogDocument(fake), { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'vertex catalog');
}

type CatalogDocument = { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };

/**
 * The document behind `vertexCatalog`: its providers and models added to `doc` (by default the
 * fake catalog's); the fake's token endpoint is set to trust the fresh service account.
 */
export function vertexCatalogDocument(fake: FakeUpstream, doc = fakeCatalogDocument(fake, { maxRetries: 0 }) as CatalogDocument): CatalogDocument {
  const account = writeServiceAccount(`${fake.url}/oauth2/token`, { projectId: 'switchyard-test' });
  fake.setOAuth({ publicKey: account.publicKey });
  const stranger = writeServiceAccount(`${fake.url}/oauth2/token`, { projectId: 'switchyard-test' });
  const provider = (type: string, file = account.file) => ({
    type,
    base_url: `${fake.url}/v1`,
    options: { location: 'us-east5', credentials_file: file },
    max_retries: 0,
    timeouts: { connect_ms: 2_000, first_byte_ms: 5_000, idle_ms: 5_000 },
  });
  doc.providers['up-vertex-claude'] = provider('vertex-anthropic');
  doc.providers['up-vertex-gemini'] = provider('vertex-gemini');
  doc.providers['up-vertex-untrusted'] = provider('vertex-anthropic', stranger.file);
  const capabilities = { tools: true, reasoning: true, images: true };
  doc.models.push(
    { id: 'vc', provider: 'up-vertex-claude', upstream_model: 'claude-sonnet-4-5@20250929', price: { input: '3.00', output: '15.00', cache_read: '0.30', cache_write: '3.75' }, max_output_tokens: 32_000, capabilities },
    { id: 'vc-untrusted', provider: 'up-vertex-untrusted', upstream_model: 'claude-sonnet-4-5@20250929', free: true, capabilities },
    { id: 'vg', provider: 'up-vertex-gemini', upstream_model: 'gemini-2.5-flash', price: { input: '0.30', output: '2.50', cache_read: '0.03' }, max_output_tokens: 32_000, capabilities },
  );
  return doc;
}
