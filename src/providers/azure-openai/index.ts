import type { Provider, ProviderCall, ProviderConfig } from '../types.js';
import { openaiProvider, streamChatCompletions } from '../openai/index.js';

/** The data-plane API version sent when `options.api_version` gives none (Azure's GA version of 2024-10-21). */
const DEFAULT_API_VERSION = '2024-10-21';

/**
 * Azure OpenAI upstreams: OpenAI's Chat Completions bodies, answers, streams and errors, at
 * `{base_url}/openai/deployments/{deployment}/chat/completions?api-version=...` (the catalog's
 * `upstream_model` is the Azure deployment's name) with the key in `api-key`. What it can do is
 * what an OpenAI upstream can.
 */
export const azureOpenaiProvider = {
  type: 'azure-openai',
  genAiName: 'azure.ai.openai',
  // A resource's own endpoint (https://<resource>.openai.azure.com): the config must name it.
  defaultBaseUrl: 'https://example.openai.azure.com',
  capabilities: openaiProvider.capabilities,
  options: {
    ...openaiProvider.options,
    schema: { type: 'object', additionalProperties: false, properties: { api_version: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}(-preview)?$' } } },
  },
  stream(call: ProviderCall) {
    const provider = call.target.provider;
    const auth = { ...(provider.apiKey ? { 'api-key': provider.apiKey } : {}), ...provider.headers };
    // The deployment in the path names the model; Azure ignores a `model` in the body.
    return streamChatCompletions(call, deploymentUrl(provider, call.target.upstreamModel), auth, (body) => delete body.model);
  },
} satisfies Provider;

function deploymentUrl(provider: ProviderConfig, deployment: string): string {
  const version = (provider.options?.api_version as string | undefined) ?? DEFAULT_API_VERSION;
  return `${provider.baseUrl}/openai/deployments/${encodeURIComponent(deployment)}/chat/completions?api-version=${version}`;
}
