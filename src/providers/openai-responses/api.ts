import { RESPONSES_FAMILY, type ReasoningOrigin } from '../../ir/index.js';
import type { ProviderConfig } from '../types.js';

/** Transport facts of a Responses-speaking upstream (OpenAI `/v1/responses` and compatibles). */

/** The registry key of this provider (the `type` in the config). */
export const RESPONSES_TYPE = 'openai-responses';
export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';


/**
 * Reasoning from this provider: encrypted_content, bound to Responses upstreams and opaque to
 * clients that carry signed thinking blocks.
 */
export function reasoningOrigin(model: string): ReasoningOrigin {
  return { provider: RESPONSES_FAMILY, ...(model ? { model } : {}), opaque: true };
}

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
