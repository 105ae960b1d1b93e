import type { ProviderConfig } from '../types.js';

/** Transport facts of the Anthropic Messages API. */

/** The registry key of this provider (the `type` in the config). */
export const ANTHROPIC_KIND = 'anthropic';
export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
export const FAST_MODE_BETA = 'fast-mode-2026-02-01';

/** `baseUrl` is the origin, e.g. `https://api.anthropic.com`. */
export function messagesUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/v1/messages`;
}

export function authHeaders(provider: ProviderConfig): Record<string, string> {
  return {
    ...(provider.apiKey ? { 'x-api-key': provider.apiKey } : {}),
    ...provider.headers,
  };
}
