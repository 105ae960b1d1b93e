import type { ProviderConfig } from '../types.js';

/** Transport facts of an OpenAI-compatible chat upstream (OpenAI, DeepSeek, vLLM, Ollama, Azure-style proxies). */

/** The registry key of this provider, also the family stamped on reasoning origins it produces and accepts. */
export const OPENAI_KIND = 'openai';
export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** `baseUrl` includes the version segment, e.g. `https://api.openai.com/v1`. */
export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

export function authHeaders(provider: ProviderConfig): Record<string, string> {
  return {
    ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
    ...provider.headers,
  };
}
