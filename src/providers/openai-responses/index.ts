import { RESPONSES_EXT, RESPONSES_FAMILY } from '../../ir/index.js';
import type { Provider, ProviderCall, ProviderCapabilities } from '../types.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import { authHeaders, DEFAULT_BASE_URL, RESPONSES_TYPE, responsesUrl } from './api.js';
import { decodeError } from './decode-error.js';
import { decodeResponse } from './decode-response.js';
import { decodeResponsesStream, initResponsesStream } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';

/** The same for every target of this kind. */
const CAPABILITIES: ProviderCapabilities = {
  thinking: { minBudget: 0, forcedToolBlocksThinking: false },
  jsonMode: true,
  nativeProtocol: RESPONSES_EXT,
  serverTools: true,
  signatures: { family: RESPONSES_FAMILY, opaque: true },
  // OpenAI's own models: o200k_base, plus the message framing it adds.
  tokenizerMargin: 0.1,
};

/** Responses-speaking upstreams (`POST /responses`: OpenAI and compatibles). */
export const openaiResponsesProvider = {
  type: RESPONSES_TYPE,
  genAiName: 'openai',
  defaultBaseUrl: DEFAULT_BASE_URL,
  capabilities: () => CAPABILITIES,
  // The fast variant as a service tier of the same model (`fast: { service_tier }`).
  options: { fastFields: { service_tier: { type: 'string' } } },
  stream(call: ProviderCall) {
    const { body, headers } = encodeRequest(call.request, call.target);
    return streamUpstream(call, {
      url: responsesUrl(call.target.provider.baseUrl),
      headers: { ...authHeaders(call.target.provider), ...headers },
      body,
      decodeError,
      decodeStream: decodeResponsesStream,
      initStream: initResponsesStream,
      decodeResponse,
    });
  },
} satisfies Provider;
