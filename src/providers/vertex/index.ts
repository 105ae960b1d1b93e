import type { Provider, ProviderCall } from '../types.js';
import { anthropicProvider } from '../anthropic/index.js';
import { decodeResponse as decodeMessagesResponse } from '../anthropic/decode-response.js';
import { decodeMessagesStream, initMessagesStream } from '../anthropic/decode-stream.js';
import { geminiProvider } from '../gemini/index.js';
import { decodeResponse as decodeGeminiResponse } from '../gemini/decode-response.js';
import { decodeGeminiStream, initGeminiStream } from '../gemini/decode-stream.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import { anthropicUrl, DEFAULT_BASE_URL, geminiUrl, VERTEX_ANTHROPIC_KIND, VERTEX_GEMINI_KIND } from './api.js';
import { restampErrors, vertexErrorDecoder } from './decode-error.js';
import { encodeAnthropicRequest, encodeGeminiRequest } from './encode-request.js';
import { bearerSigner } from './get-access-token.js';
import { vertexOptions } from './options.js';
import { withTokenRenewal } from './renew-token.js';

/**
 * Anthropic's models on Vertex AI (`publishers/anthropic/...:rawPredict` / `:streamRawPredict`):
 * the Messages API's bodies, answers and streams, with a Google access token. What it can do is
 * what Anthropic's API can; thinking signatures are the same family (they are valid across the
 * platforms Claude runs on).
 */
export const vertexAnthropicProvider = {
  type: VERTEX_ANTHROPIC_KIND,
  genAiName: 'gcp.vertex_ai',
  defaultBaseUrl: DEFAULT_BASE_URL,
  capabilities: anthropicProvider.capabilities,
  options: vertexOptions,
  stream(call: ProviderCall) {
    const provider = call.target.provider;
    const { body, headers } = encodeAnthropicRequest(call.request, call.target);
    return withTokenRenewal(call, VERTEX_ANTHROPIC_KIND, () => streamUpstream(call, {
      url: anthropicUrl(provider, call.target.upstreamModel, call.request.stream),
      headers: { ...provider.headers, ...headers },
      body,
      sign: bearerSigner(provider),
      decodeError: vertexErrorDecoder(VERTEX_ANTHROPIC_KIND),
      decodeStream: restampErrors(decodeMessagesStream, VERTEX_ANTHROPIC_KIND),
      initStream: initMessagesStream,
      decodeResponse: decodeMessagesResponse,
    }));
  },
} satisfies Provider;

/**
 * Gemini models on Vertex AI (`publishers/google/...:generateContent` /
 * `:streamGenerateContent?alt=sse`): the Gemini API's bodies (every content with its `role`, as
 * Vertex requires), answers and streams, with a Google access token.
 */
export const vertexGeminiProvider = {
  type: VERTEX_GEMINI_KIND,
  genAiName: 'gcp.vertex_ai',
  defaultBaseUrl: DEFAULT_BASE_URL,
  capabilities: geminiProvider.capabilities,
  options: vertexOptions,
  stream(call: ProviderCall) {
    const provider = call.target.provider;
    // Gemini's function calls have no ids: each is minted from the request id.
    const callIdPrefix = `call_${call.requestId.replace(/[^A-Za-z0-9_-]/g, '')}`;
    return withTokenRenewal(call, VERTEX_GEMINI_KIND, () => streamUpstream(call, {
      url: geminiUrl(provider, call.target.upstreamModel, call.request.stream),
      headers: { ...provider.headers },
      body: encodeGeminiRequest(call.request),
      sign: bearerSigner(provider),
      decodeError: vertexErrorDecoder(VERTEX_GEMINI_KIND),
      decodeStream: restampErrors(decodeGeminiStream, VERTEX_GEMINI_KIND),
      initStream: () => initGeminiStream(callIdPrefix),
      decodeResponse: (body) => decodeGeminiResponse(body, callIdPrefix),
    }));
  },
} satisfies Provider;

/** Both Vertex kinds, for the registry. */
export const vertexProviders = [vertexAnthropicProvider, vertexGeminiProvider] as const;
