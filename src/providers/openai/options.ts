import type { ProviderConfig, ProviderOptionsSpec } from '../types.js';

type MaxTokensField = 'max_tokens' | 'max_completion_tokens';

/**
 * An OpenAI-compatible upstream's settings: `max_tokens_field` on its provider entry, the field
 * that carries the output ceiling (`max_tokens`, the default, is what DeepSeek, vLLM and Ollama
 * know; OpenAI's reasoning models, o-series and gpt-5, accept only `max_completion_tokens`), and
 * `fast: { service_tier }` on a model, the fast variant as a service tier of the same model.
 */
export const openaiOptionsSpec: ProviderOptionsSpec = {
  fields: { max_tokens_field: { enum: ['max_tokens', 'max_completion_tokens'] } },
  fastFields: { service_tier: { type: 'string' } },
};

/** Where the ceiling goes for this upstream. */
export function maxTokensField(provider: ProviderConfig): MaxTokensField {
  return (provider.options?.max_tokens_field as MaxTokensField | undefined) ?? 'max_tokens';
}
