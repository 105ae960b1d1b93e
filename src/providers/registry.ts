import type { Provider, ProviderType } from './types.js';
import { anthropicProvider } from './anthropic/index.js';
import { localProvider } from './local/index.js';
import { openaiProvider } from './openai/index.js';
import { openaiResponsesProvider } from './openai-responses/index.js';

/** ProviderType -> Provider. A new provider is a new folder plus one line here. */
export const providers: Record<ProviderType, Provider> = {
  openai: openaiProvider,
  anthropic: anthropicProvider,
  local: localProvider,
  'openai-responses': openaiResponsesProvider,
};
