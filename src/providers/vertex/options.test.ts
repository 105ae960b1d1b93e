import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../config/load-config.js';
import { writeServiceAccount, type ServiceAccount } from '../../../test/support/google-service-account.js';
import { resolveBaseUrl } from './api.js';
import { vertexAnthropicProvider, vertexGeminiProvider } from './index.js';
import { vertexOptions } from './options.js';

/** Where the service account's tokens come from: never called here, only carried into the options. */
const TOKEN_URI = 'http://127.0.0.1:9/oauth2/token';
let account: ServiceAccount;
beforeAll(() => {
  account = writeServiceAccount(TOKEN_URI, { projectId: 'switchyard-test' });
});

describe('options', () => {
  const build = (raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => vertexOptions.build!(raw, env);

  it('take the project from options, then GOOGLE_CLOUD_PROJECT, then the credentials file', () => {
    expect(build({ credentials_file: account.file })).toMatchObject({ project: 'switchyard-test', location: 'global', credentialsFile: account.file, tokenUri: `${TOKEN_URI}` });
    expect(build({ credentials_file: account.file }, { GOOGLE_CLOUD_PROJECT: 'from-env' })).toMatchObject({ project: 'from-env' });
    expect(build({ credentials_file: account.file, project: 'given' }, { GOOGLE_CLOUD_PROJECT: 'from-env' })).toMatchObject({ project: 'given' });
    expect(build({}, { GOOGLE_APPLICATION_CREDENTIALS: account.file })).toMatchObject({ project: 'switchyard-test', credentialsFile: account.file });
    // Without a file, Application Default Credentials find their own at the first call.
    expect(build({ project: 'p', location: 'europe-west1' })).toEqual({ project: 'p', location: 'europe-west1' });
  });

  it('refuse a start without a project or with a credentials file that cannot be used', () => {
    const noProject = writeServiceAccount('https://oauth2.googleapis.com/token');
    expect(() => build({ credentials_file: noProject.file })).toThrow(/no Google Cloud project: set options.project, GOOGLE_CLOUD_PROJECT/);
    expect(build({ credentials_file: noProject.file, project: 'p' })).not.toHaveProperty('tokenUri');
    expect(() => build({ project: 'p', credentials_file: '/nonexistent/sa.json' })).toThrow(/credentials_file \/nonexistent\/sa.json is not a readable credentials JSON file \(ENOENT\)/);
    expect(() => build({ project: 'p' }, { GOOGLE_APPLICATION_CREDENTIALS: TOKEN_URI })).toThrow(/GOOGLE_APPLICATION_CREDENTIALS/);
    const external = path.join(path.dirname(noProject.file), 'external.json');
    writeFileSync(external, JSON.stringify({ type: 'external_account', credential_source: { executable: { command: '/bin/true' } } }));
    expect(() => build({ project: 'p', credentials_file: external })).toThrow(/credentials of type "external_account" are not supported/);
  });

  it('place the default endpoint in the location (global has no regional host)', () => {
    expect(resolveBaseUrl(vertexGeminiProvider.defaultBaseUrl, 'us-east5')).toBe('https://us-east5-aiplatform.googleapis.com/v1');
    expect(resolveBaseUrl(vertexAnthropicProvider.defaultBaseUrl, 'global')).toBe('https://aiplatform.googleapis.com/v1');
    expect(resolveBaseUrl('https://proxy.example/{location}/v1/', 'europe-west4')).toBe('https://proxy.example/europe-west4/v1');
  });

  it('the documented configuration loads (its credentials file replaced by one that exists)', () => {
    const md = readFileSync(path.resolve(import.meta.dirname, '../../../docs/providers.md'), 'utf8');
    const block = /## Google Vertex AI[\s\S]*?```yaml\n([\s\S]*?)```/.exec(md)![1];
    const catalog = buildCatalog(parseYaml(block.replace('/etc/switchyard/vertex-sa.json', account.file)), {}, 'docs/providers.md');
    expect(catalog.providers.get('vertex-claude')).toMatchObject({
      type: 'vertex-anthropic',
      baseUrl: 'https://{location}-aiplatform.googleapis.com/v1',
      options: { project: 'my-gcp-project', location: 'us-east5', credentialsFile: account.file },
    });
    expect(catalog.providers.get('vertex-gemini')!.options).toEqual({ project: 'my-gcp-project', location: 'europe-west4' });
  });
});
