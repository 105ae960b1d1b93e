import { CHAT_EXT } from '../../ir/index.js';
import type { Provider, ProviderCall, ProviderCapabilities } from '../types.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import { authHeaders, chatCompletionsUrl, DEFAULT_BASE_URL, OPENAI_KIND } from './api.js';
import { decodeError } from './decode-error.js';
import { decodeResponse } from './decode-response.js';
import { decodeChatStream, initChatStream } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';
import { openaiOptionsSpec } from './options.js';

/** The same for every target of this kind. */
const CAPABILITIES: ProviderCapabilities = {
  thinking: { minBudget: 0, forcedToolBlocksThinking: false },
  jsonMode: true,
  nativeProtocol: CHAT_EXT,
  serverTools: false,
  // reasoning_content (DeepSeek) carries no signature; it goes back only to this kind.
  signatures: { family: OPENAI_KIND, opaque: false },
  // OpenAI-compatible servers run other vocabularies too (DeepSeek, Qwen, Llama), and older OpenAI models cl100k.
  tokenizerMargin: 0.25,
};

/** OpenAI-compatible `/chat/completions` upstreams (OpenAI, DeepSeek, vLLM, Ollama, ...). */
export const openaiProvider = {
  type: OPENAI_KIND,
  genAiName: 'openai',
  defaultBaseUrl: DEFAULT_BASE_URL,
  capabilities: () => CAPABILITIES,
  options: openaiOptionsSpec,
  stream(call: ProviderCall) {
    return streamChatCompletions(call, chatCompletionsUrl(call.target.provider.baseUrl), authHeaders(call.target.provider));
  },
} satisfies Provider;

/**
 * One Chat Completions call at `url` with `auth` (the credential and the provider's own headers):
 * OpenAI's wire, for OpenAI and for upstreams that speak it at another address (Azure). `shape`
 * adjusts the encoded body for such an upstream.
 */
export function streamChatCompletions(call: ProviderCall, url: string, auth: Record<string, string>, shape?: (body: Record<string, unknown>) => void) {
  const { body, headers } = encodeRequest(call.request, call.target);
  shape?.(body);
  return streamUpstream(call, {
    url,
    headers: { ...auth, ...headers },
    body,
    decodeError,
    decodeStream: decodeChatStream,
    initStream: initChatStream,
    decodeResponse,
  });
}
