import { buildCatalog } from '../../src/config/load-config.js';
import type { Catalog } from '../../src/routing/catalog.js';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from './fake-catalog.js';

/**
 * The fake catalog plus a `gemini` provider (`up-gemini`, `${fake.url}/v1beta`) and two models on
 * it, upstream model gemini-2.5-flash: `gm`, and `gm-guarded`, which falls back to `up-openai`.
 */
export function geminiCatalog(fake: FakeUpstream): Catalog {
  return buildCatalog(geminiCatalogDocument(fake), { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'gemini catalog');
}

type CatalogDocument = { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };

/** The document behind `geminiCatalog`: its provider and models added to `doc` (by default the fake catalog's). */
export function geminiCatalogDocument(fake: FakeUpstream, doc = fakeCatalogDocument(fake, { maxRetries: 0 }) as CatalogDocument): CatalogDocument {
  doc.providers['up-gemini'] = {
    type: 'gemini',
    base_url: `${fake.url}/v1beta`,
    api_key_env: FAKE_KEY_ENV,
    max_retries: 0,
    timeouts: { connect_ms: 2_000, first_byte_ms: 5_000, idle_ms: 5_000 },
  };
  const gemini = {
    provider: 'up-gemini',
    upstream_model: 'gemini-2.5-flash',
    price: { input: '0.30', output: '2.50', cache_read: '0.03' },
    max_output_tokens: 32_000,
    capabilities: { tools: true, reasoning: true, images: true },
  };
  doc.models.push({ id: 'gm', ...gemini }, { id: 'gm-guarded', ...gemini, fallbacks: ['up-openai'] });
  return doc;
}
