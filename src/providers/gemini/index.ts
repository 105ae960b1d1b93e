import type { Provider, ProviderCall, ProviderCapabilities } from '../types.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import { authHeaders, DEFAULT_BASE_URL, GEMINI_FAMILY, GEMINI_KIND, generateUrl } from './api.js';
import { decodeError } from './decode-error.js';
import { decodeResponse } from './decode-response.js';
import { decodeGeminiStream, initGeminiStream } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';

/** The same for every target of this kind. */
const CAPABILITIES: ProviderCapabilities = {
  // Gemini 2.5 Pro's smallest thinking budget is 128; thinking and a forced function call mix.
  thinking: { minBudget: 128, forcedToolBlocksThinking: false },
  // `responseMimeType: application/json` without a schema.
  jsonMode: true,
  serverTools: false,
  // Thought signatures go back to Gemini only: clients get them sealed in an envelope naming
  // the family (thinking blocks, encrypted_content), never as an Anthropic signature.
  signatures: { family: GEMINI_FAMILY, opaque: true },
  // Gemini's SentencePiece vocabulary counts up to about a quarter more than o200k_base.
  tokenizerMargin: 0.25,
};

/** Gemini API upstreams (`generateContent`, `streamGenerateContent?alt=sse`). */
export const geminiProvider = {
  type: GEMINI_KIND,
  genAiName: 'gcp.gemini',
  defaultBaseUrl: DEFAULT_BASE_URL,
  capabilities: () => CAPABILITIES,
  stream(call: ProviderCall) {
    // Gemini's function calls have no ids: each call's is minted from the request id, so ids are
    // unique across the turns of a conversation.
    const callIdPrefix = `call_${call.requestId.replace(/[^A-Za-z0-9_-]/g, '')}`;
    return streamUpstream(call, {
      url: generateUrl(call.target.provider.baseUrl, call.target.upstreamModel, call.request.stream),
      headers: authHeaders(call.target.provider),
      body: encodeRequest(call.request),
      decodeError,
      decodeStream: decodeGeminiStream,
      initStream: () => initGeminiStream(callIdPrefix),
      decodeResponse: (body) => decodeResponse(body, callIdPrefix),
    });
  },
} satisfies Provider;
