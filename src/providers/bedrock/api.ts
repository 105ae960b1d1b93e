import type { ProviderConfig } from '../types.js';

/** Transport facts of the Amazon Bedrock Runtime API. */

/** The registry key of this provider (the `type` in the config). */
export const BEDROCK_KIND = 'bedrock';
/** SigV4's service name for the runtime endpoints. */
export const SIGNING_SERVICE = 'bedrock';
/** The `{region}` is filled from the provider's region (`options.region`, else `AWS_REGION`). */
export const DEFAULT_BASE_URL = 'https://bedrock-runtime.{region}.amazonaws.com';
/** What InvokeModel wants instead of Anthropic's `anthropic-version` header. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
/** The content type of a streamed answer: AWS event-stream frames. */
export const EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

/** The two Bedrock Runtime APIs a model is called through. */
export type BedrockApi = 'invoke' | 'converse';

/** A provider's Bedrock settings, as `options.build` resolved them. */
export interface BedrockOptions {
  region: string;
  /** A named profile of the shared AWS config files; the default credential chain when absent. */
  profile?: string;
  /** Forced API; when absent, `invoke` for Anthropic models and `converse` for the others. */
  api?: BedrockApi;
}

export function bedrockOptions(provider: ProviderConfig): BedrockOptions {
  const o = provider.options ?? {};
  return {
    region: typeof o.region === 'string' ? o.region : '',
    ...(typeof o.profile === 'string' ? { profile: o.profile } : {}),
    ...(o.api === 'invoke' || o.api === 'converse' ? { api: o.api } : {}),
  };
}

/**
 * The API for a model: the configured one, else InvokeModel for Anthropic models (their own
 * Messages body, which keeps every Anthropic feature) and Converse for the rest. A model id may be
 * an inference profile (`us.anthropic.claude-...`, `global.anthropic...`) or an ARN naming one.
 */
export function apiFor(model: string, options: BedrockOptions): BedrockApi {
  if (options.api) return options.api;
  return isAnthropicModel(model) ? 'invoke' : 'converse';
}

/** `anthropic.claude-...`, `us.anthropic.claude-...`, or an ARN whose resource names one. */
export function isAnthropicModel(model: string): boolean {
  return /(^|[.:/])anthropic\./.test(model);
}

/**
 * `POST {base}/model/{modelId}/{action}`. The model id is one escaped path segment (`:` in
 * `...-v1:0` and the `/` of an ARN included), as the AWS SDK sends it.
 */
export function modelUrl(baseUrl: string, region: string, model: string, api: BedrockApi, stream: boolean): string {
  const action = api === 'invoke' ? (stream ? 'invoke-with-response-stream' : 'invoke') : stream ? 'converse-stream' : 'converse';
  return `${resolveBaseUrl(baseUrl, region)}/model/${encodeURIComponent(model)}/${action}`;
}

export function resolveBaseUrl(baseUrl: string, region: string): string {
  return baseUrl.replace('{region}', region).replace(/\/+$/, '');
}

/**
 * Static headers: a Bedrock API key (`api_key_env`, e.g. `AWS_BEARER_TOKEN_BEDROCK`) goes as a
 * bearer token and replaces SigV4; without one every request is signed (see sign-request.ts).
 */
export function staticHeaders(provider: ProviderConfig, stream: boolean): Record<string, string> {
  return {
    accept: stream ? EVENT_STREAM_TYPE : 'application/json',
    ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
    ...provider.headers,
  };
}
