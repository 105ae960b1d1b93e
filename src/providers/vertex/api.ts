import type { ProviderConfig } from '../types.js';

/** Transport facts of Vertex AI (`aiplatform.googleapis.com`): where a model is, and how it is called. */

/** The registry keys (the `type` in the config): Anthropic's models and Google's, on Vertex. */
export const VERTEX_ANTHROPIC_KIND = 'vertex-anthropic';
export const VERTEX_GEMINI_KIND = 'vertex-gemini';
/** The Messages API version Vertex takes in the body (instead of an `anthropic-version` header). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
/**
 * The regional endpoint of the configured location. `{location}` is filled in per provider:
 * `us-east5` -> `https://us-east5-aiplatform.googleapis.com/v1`, and the `global` location has no
 * regional host (`https://aiplatform.googleapis.com/v1`). A `base_url` may use `{location}` too.
 */
export const DEFAULT_BASE_URL = 'https://{location}-aiplatform.googleapis.com/v1';
/** Google's scope for Vertex AI: access tokens are asked for with it. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** The settings of a Vertex provider (`options:` in the config, built by `options.ts`). */
export interface VertexSettings {
  project: string;
  location: string;
  /** A credentials JSON file (service account); absent: Application Default Credentials. */
  credentialsFile?: string;
  /** The credentials file's `token_uri`, when it names another endpoint than Google's. */
  tokenUri?: string;
}

export function settingsOf(provider: ProviderConfig): VertexSettings {
  const o = provider.options ?? {};
  return {
    project: String(o.project ?? ''),
    location: String(o.location ?? 'global'),
    ...(typeof o.credentialsFile === 'string' ? { credentialsFile: o.credentialsFile } : {}),
    ...(typeof o.tokenUri === 'string' ? { tokenUri: o.tokenUri } : {}),
  };
}

export function resolveBaseUrl(baseUrl: string, location: string): string {
  const host = location === 'global' ? '' : `${location}-`;
  return baseUrl.replaceAll('{location}-', host).replaceAll('{location}', location).replace(/\/+$/, '');
}

/**
 * `{base}/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`.
 * Project, location and model are single escaped path segments, so no name can reach another path.
 */
export function modelUrl(provider: ProviderConfig, publisher: 'anthropic' | 'google', model: string, method: string): string {
  const { project, location } = settingsOf(provider);
  const base = resolveBaseUrl(provider.baseUrl, location);
  const seg = encodeURIComponent;
  return `${base}/projects/${seg(project)}/locations/${seg(location)}/publishers/${publisher}/models/${seg(model)}:${method}`;
}

/** Anthropic's models: `rawPredict` (a whole answer) or `streamRawPredict` (SSE). */
export function anthropicUrl(provider: ProviderConfig, model: string, stream: boolean): string {
  return modelUrl(provider, 'anthropic', model, stream ? 'streamRawPredict' : 'rawPredict');
}

/** Gemini models: `generateContent`, or `streamGenerateContent` asked for as SSE. */
export function geminiUrl(provider: ProviderConfig, model: string, stream: boolean): string {
  return modelUrl(provider, 'google', model, stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
}
