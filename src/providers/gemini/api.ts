import type { ProviderConfig } from '../types.js';

/** Transport facts of the Gemini API (`generativelanguage.googleapis.com`). */

/** The registry key of this provider (the `type` in the config). */
export const GEMINI_KIND = 'gemini';
/** The signature family of Gemini's `thoughtSignature`s: they go back to Gemini only. */
export const GEMINI_FAMILY = 'gemini';
export const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/**
 * `baseUrl` includes the API version (`.../v1beta`). The model is one path segment, escaped, so a
 * model name can never reach another path; Gemini's own names (`gemini-2.5-flash`) are unchanged.
 * A stream is asked for as SSE (`alt=sse`).
 */
export function generateUrl(baseUrl: string, model: string, stream: boolean): string {
  const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return `${baseUrl.replace(/\/+$/, '')}/models/${encodeURIComponent(model)}:${method}`;
}

export function authHeaders(provider: ProviderConfig): Record<string, string> {
  return {
    ...(provider.apiKey ? { 'x-goog-api-key': provider.apiKey } : {}),
    ...provider.headers,
  };
}
