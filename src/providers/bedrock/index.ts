import { MESSAGES_EXT, THINKING_FAMILY } from '../../ir/index.js';
import { decodeResponse as decodeMessage } from '../anthropic/decode-response.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import type { Provider, ProviderCall } from '../types.js';
import { BEDROCK_KIND, bedrockOptions, DEFAULT_BASE_URL, modelUrl, staticHeaders } from './api.js';
import { decodeError } from './decode-error.js';
import { decodeInvokeStream, initInvokeStream } from './decode-stream.js';
import { encodeInvokeRequest } from './encode-request.js';
import { bedrockOptionsSpec } from './options.js';
import { readEventStream } from './read-event-stream.js';
import { sigV4Signer } from './sign-request.js';

/**
 * Amazon Bedrock Runtime upstreams: Anthropic models through InvokeModel (their Messages body,
 * streamed as AWS event-stream frames), signed with SigV4 or sent with a Bedrock API key.
 */
export const bedrockProvider = {
  type: BEDROCK_KIND,
  defaultBaseUrl: DEFAULT_BASE_URL,
  options: bedrockOptionsSpec,
  capabilities: {
    // Claude on Bedrock has Anthropic's thinking rules.
    thinking: { minBudget: 1024, forcedToolBlocksThinking: true },
    jsonMode: false,
    // The body is Anthropic's: a messages client's own fields (top_k, ...) and betas reach it.
    nativeProtocol: MESSAGES_EXT,
    // Anthropic's server tools (web search, code execution, ...) are not run by Bedrock.
    serverTools: false,
    // Claude's thinking signatures are valid across Anthropic, Bedrock and Vertex: one family.
    signatures: { family: THINKING_FAMILY, opaque: false },
  },
  stream(call: ProviderCall) {
    const provider = call.target.provider;
    const options = bedrockOptions(provider);
    const api = 'invoke' as const;
    const stream = call.request.stream;
    return streamUpstream(call, {
      url: modelUrl(provider.baseUrl, options.region, call.target.upstreamModel, api, stream),
      headers: staticHeaders(provider, stream),
      body: encodeInvokeRequest(call.request, call.target),
      ...(provider.apiKey ? {} : { sign: sigV4Signer(provider) }),
      readEvents: readEventStream,
      decodeError,
      decodeStream: decodeInvokeStream,
      initStream: initInvokeStream,
      decodeResponse: decodeMessage,
    });
  },
} satisfies Provider;
