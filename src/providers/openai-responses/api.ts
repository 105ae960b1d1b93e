import type { ProviderConfig } from '../types.js';

/** Transport facts of a Responses-speaking upstream (OpenAI `/v1/responses` and compatibles). */

/** The provider kind stamped on reasoning origins this provider produces and accepts. */
export const RESPONSES_KIND = 'openai-responses';

/** The ext key of the Responses client protocol (its unmapped fields ride there). */
export const EXT_KEY = 'openai-responses';

/** `baseUrl` includes the version segment, e.g. `https://api.openai.com/v1`. */
export function responsesUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/responses`;
}

export function authHeaders(provider: ProviderConfig): Record<string, string> {
  return {
    ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
    ...provider.headers,
  };
}
