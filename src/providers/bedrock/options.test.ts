import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../config/load-config.js';

const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';

describe('a bedrock provider in the config', () => {
  const doc = (provider: Record<string, unknown>) => ({
    providers: { bedrock: { type: 'bedrock', ...provider } },
    models: [{ id: 'claude', provider: 'bedrock', upstream_model: MODEL, price: { input: '3', output: '15' } }],
  });
  const load = (provider: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => buildCatalog(doc(provider), env, 'test.yaml').providers.get('bedrock')!;

  it("takes its region from options, else AWS_REGION, and its default URL is the region's endpoint", () => {
    expect(load({ options: { region: 'eu-central-1', profile: 'prod' } })).toMatchObject({ baseUrl: 'https://bedrock-runtime.{region}.amazonaws.com', options: { region: 'eu-central-1', profile: 'prod' } });
    expect(load({}, { AWS_REGION: 'us-west-2' }).options).toEqual({ region: 'us-west-2' });
    expect(load({}, { AWS_DEFAULT_REGION: 'ap-south-1' }).options).toEqual({ region: 'ap-south-1' });
  });

  it('refuses to start without a region, with a bad one, or with an unknown option, naming the entry', () => {
    expect(() => load({})).toThrow(/providers\.bedrock\.options: no AWS region/);
    expect(() => load({ options: { region: 'Europe' } })).toThrow(/providers\.bedrock\.options/);
    expect(() => load({ options: { region: 'us-east-1', zone: 'a' } })).toThrow(/additional properties: "zone"/);
  });

  it('a model on a base_url that names the region is priced from the table without a price', () => {
    const c = buildCatalog(
      { providers: { bedrock: { type: 'bedrock', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', options: { region: 'us-east-1' } } }, models: [{ id: 'claude', provider: 'bedrock', upstream_model: MODEL }] },
      {},
      'test.yaml',
    );
    expect(c.models.get('claude')!.price.input).toBeGreaterThan(0n);
  });
});
