import { buildCatalog } from '../../src/config/load-config.js';
import type { Catalog } from '../../src/routing/catalog.js';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';

/** The key the fake-upstream providers read from the environment (the fake accepts any key). */
export const FAKE_KEY_ENV = 'SWITCHYARD_TEST_FAKE_KEY';

export interface FakeCatalogOptions {
  /** Retries per provider (default 1, so fault tests stay fast). */
  maxRetries?: number;
  /** Provider timeouts in ms (defaults: connect 2 s, first byte 5 s, idle 5 s). */
  timeouts?: { connect_ms?: number; first_byte_ms?: number; idle_ms?: number };
  /** Extra model entries in config form (`{id, provider: 'up-openai' | 'up-anthropic', upstream_model, ...}`). */
  models?: Array<Record<string, unknown>>;
}

/**
 * A catalog whose two providers point at a running fake upstream, built through the same
 * `buildCatalog` a YAML config goes through:
 *   up-openai    -> type openai,    `${fake.url}/v1`, upstream model gpt-4o-mini
 *   up-anthropic -> type anthropic, `${fake.url}`,    upstream model claude-sonnet-4-5
 * Both reason and are priced ($1 / $4 per million in/out, cache $0.1 read / $1.25 write) so the
 * ledger has something to bill. Pick the fake's answer with `fake.script(...)` or `setScenario`.
 */
export function fakeCatalog(fake: FakeUpstream, opts: FakeCatalogOptions = {}): Catalog {
  return buildCatalog(fakeCatalogDocument(fake, opts), { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'fake catalog');
}

/** The config document behind `fakeCatalog` (YAML-equivalent), for tests that write it to a file. */
export function fakeCatalogDocument(fake: FakeUpstream, opts: FakeCatalogOptions = {}): Record<string, unknown> {
  const provider = (type: string, base: string) => ({
    type,
    base_url: base,
    api_key_env: FAKE_KEY_ENV,
    max_retries: opts.maxRetries ?? 1,
    timeouts: { connect_ms: 2_000, first_byte_ms: 5_000, idle_ms: 5_000, ...opts.timeouts },
  });
  const price = { input: '1.00', output: '4.00', cache_read: '0.10', cache_write: '1.25' };
  const model = (id: string, providerId: string, upstream: string) => ({
    id,
    provider: providerId,
    upstream_model: upstream,
    price,
    context_window: 200_000,
    max_output_tokens: 32_000,
    capabilities: { tools: true, reasoning: true, images: true },
  });
  return {
    providers: {
      'up-openai': provider('openai', `${fake.url}/v1`),
      'up-anthropic': provider('anthropic', fake.url),
    },
    models: [model('up-openai', 'up-openai', 'gpt-4o-mini'), model('up-anthropic', 'up-anthropic', 'claude-sonnet-4-5'), ...(opts.models ?? [])],
  };
}
