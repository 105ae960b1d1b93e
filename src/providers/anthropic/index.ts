import { MESSAGES_EXT, THINKING_FAMILY } from '../../ir/index.js';
import type { Provider, ProviderCall, ProviderCapabilities } from '../types.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import { ANTHROPIC_KIND, authHeaders, DEFAULT_BASE_URL, messagesUrl } from './api.js';
import { decodeError } from './decode-error.js';
import { decodeResponse } from './decode-response.js';
import { decodeMessagesStream, initMessagesStream } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';

/** The same for every target of this kind. */
const CAPABILITIES: ProviderCapabilities = {
  // Anthropic rejects `thinking.budget_tokens` below 1024, and thinking with tool_choice any/tool.
  thinking: { minBudget: 1024, forcedToolBlocksThinking: true },
  // Structured output only with a schema.
  jsonMode: false,
  nativeProtocol: MESSAGES_EXT,
  serverTools: true,
  signatures: { family: THINKING_FAMILY, opaque: false },
  // Claude's tokenizers count up to about a third more than o200k_base on code and non-English text.
  tokenizerMargin: 0.35,
};

/** Anthropic `/v1/messages` upstreams. */
export const anthropicProvider = {
  type: ANTHROPIC_KIND,
  genAiName: 'anthropic',
  defaultBaseUrl: DEFAULT_BASE_URL,
  capabilities: () => CAPABILITIES,
  // The fast variant as Anthropic's fast mode of the same model (`fast: { speed }`).
  options: { fastFields: { speed: { type: 'string' } } },
  stream(call: ProviderCall) {
    const { body, headers } = encodeRequest(call.request, call.target);
    return streamUpstream(call, {
      url: messagesUrl(call.target.provider.baseUrl),
      headers: { ...authHeaders(call.target.provider), ...headers },
      body,
      decodeError,
      decodeStream: decodeMessagesStream,
      initStream: initMessagesStream,
      decodeResponse,
    });
  },
} satisfies Provider;
