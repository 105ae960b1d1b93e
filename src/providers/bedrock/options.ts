import type { ProviderOptionsSpec } from '../types.js';

/**
 * `options:` of a `bedrock` provider: `region` (else `AWS_REGION`, else `AWS_DEFAULT_REGION`),
 * `profile` (a named profile of the shared AWS config files, SSO ones included), `api`
 * (`invoke` | `converse`, chosen per model when absent). Credentials are never config: they
 * come from the AWS SDK's default chain at call time, or a Bedrock API key via `api_key_env`.
 */
export const bedrockOptionsSpec: ProviderOptionsSpec = {
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      region: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$' },
      profile: { type: 'string', minLength: 1 },
      api: { enum: ['invoke', 'converse'] },
    },
  },
  build(raw, env) {
    const region = (raw.region as string | undefined) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
    if (!region) throw new Error('no AWS region: set options.region, or AWS_REGION in the environment');
    if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) throw new Error(`"${region}" is not an AWS region (e.g. us-east-1)`);
    return { ...raw, region };
  },
};
