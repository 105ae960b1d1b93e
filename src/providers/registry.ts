import type { Provider, ProviderRegistry } from './types.js';
import { anthropicProvider } from './anthropic/index.js';
import { azureOpenaiProvider } from './azure-openai/index.js';
import { bedrockProvider } from './bedrock/index.js';
import { geminiProvider } from './gemini/index.js';
import { localProvider } from './local/index.js';
import { openaiProvider } from './openai/index.js';
import { openaiResponsesProvider } from './openai-responses/index.js';
import { vertexProviders } from './vertex/index.js';

/** The built-in providers. A new provider is a new folder plus one line here. */
const BUILT_IN = [
  openaiProvider,
  anthropicProvider,
  localProvider,
  openaiResponsesProvider,
  geminiProvider,
  bedrockProvider,
  ...vertexProviders,
  azureOpenaiProvider,
] as const;

/** The built-in provider kinds (the config's provider `type`s). */
export type ProviderType = (typeof BUILT_IN)[number]['type'];

/** Registry key (`Provider.type`) -> Provider, for the pipeline and the config. */
export const providers: ProviderRegistry = registryOf(BUILT_IN);

/** The built-in providers and `extra` (a deployment's own, or a test's), in one registry. */
export function withProviders(...extra: Provider[]): ProviderRegistry {
  return registryOf([...BUILT_IN, ...extra]);
}

function registryOf(list: readonly Provider[]): ProviderRegistry {
  const out: Record<string, Provider> = {};
  for (const p of list) {
    if (out[p.type]) throw new Error(`provider type "${p.type}" is registered twice`);
    out[p.type] = p;
  }
  return Object.freeze(out);
}

