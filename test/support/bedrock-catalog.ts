import { buildCatalog } from '../../src/config/load-config.js';
import { resetCredentialChains } from '../../src/providers/bedrock/sign-request.js';
import type { Catalog } from '../../src/routing/catalog.js';
import type { AwsCredentials } from '../../tools/fake-upstream/bedrock.js';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from './fake-catalog.js';
import { registerSecrets } from './log-capture.js';

/** Test-only AWS credentials: the gateway signs with them, the fake verifies with them. */
export const TEST_AWS_CREDENTIALS: Required<AwsCredentials> = {
  accessKeyId: 'AKIASWITCHYARDTEST01',
  secretAccessKey: 'switchyard/test/secret/key/0123456789abcdef',
  sessionToken: 'switchyard-session-token',
};

/**
 * Put the test credentials in the standard AWS environment variables (where the AWS SDK's default
 * chain finds them first), with no profile and no instance metadata lookups; returns the undo.
 */
export function useTestAwsCredentials(): () => void {
  const env: Record<string, string | undefined> = {
    AWS_ACCESS_KEY_ID: TEST_AWS_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_AWS_CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: TEST_AWS_CREDENTIALS.sessionToken,
    AWS_PROFILE: undefined,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    resetCredentialChains();
  };
  apply(env);
  // The run's log scan looks for them (log-capture.ts).
  registerSecrets('provider key', [TEST_AWS_CREDENTIALS.accessKeyId, TEST_AWS_CREDENTIALS.secretAccessKey, TEST_AWS_CREDENTIALS.sessionToken]);
  return () => apply(saved);
}

/**
 * The fake catalog plus a `bedrock` provider (`up-bedrock`, base_url the fake, region eu-west-1,
 * SigV4 with the test credentials) and models on it: `bd` (upstream model
 * anthropic.claude-sonnet-4-5-20250929-v1:0, InvokeModel), `bd-guarded` (the same, falling back to
 * `up-openai`), `bd-to-nova` (the same, falling back to `nova`), `bdc` (the same Claude through
 * Converse, on `up-bedrock-converse`) and `nova` (amazon.nova-pro-v1:0, Converse).
 */
export function bedrockCatalog(fake: FakeUpstream): Catalog {
  return buildCatalog(bedrockCatalogDocument(fake), { [FAKE_KEY_ENV]: 'sk-fake-upstream' }, 'bedrock catalog');
}

type CatalogDocument = { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };

/** The document behind `bedrockCatalog`: its providers and models added to `doc` (by default the fake catalog's). */
export function bedrockCatalogDocument(fake: FakeUpstream, doc = fakeCatalogDocument(fake, { maxRetries: 0 }) as CatalogDocument): CatalogDocument {
  doc.providers['up-bedrock'] = {
    type: 'bedrock',
    base_url: fake.url,
    options: { region: 'eu-west-1' },
    max_retries: 0,
    timeouts: { connect_ms: 2_000, first_byte_ms: 5_000, idle_ms: 5_000 },
  };
  const bedrock = {
    provider: 'up-bedrock',
    upstream_model: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
    price: { input: '3.00', output: '15.00', cache_read: '0.30', cache_write: '3.75' },
    max_output_tokens: 32_000,
    capabilities: { tools: true, reasoning: true, images: true },
  };
  // The same Claude through Converse (options.api), and a model that is not Anthropic (Converse by default).
  doc.providers['up-bedrock-converse'] = { ...(doc.providers['up-bedrock'] as object), options: { region: 'eu-west-1', api: 'converse' } };
  doc.models.push(
    { id: 'bd', ...bedrock },
    { id: 'bd-guarded', ...bedrock, fallbacks: ['up-openai'] },
    { id: 'bd-to-nova', ...bedrock, fallbacks: ['nova'] },
    { id: 'bdc', ...bedrock, provider: 'up-bedrock-converse' },
    { id: 'nova', ...bedrock, upstream_model: 'amazon.nova-pro-v1:0', price: { input: '0.80', output: '3.20' } },
  );
  return doc;
}
