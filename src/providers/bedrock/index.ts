import { MESSAGES_EXT, THINKING_FAMILY } from '../../ir/index.js';
import { decodeResponse as decodeMessage } from '../anthropic/decode-response.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import type { Provider, ProviderCall, ProviderCapabilities, Target } from '../types.js';
import { apiFor, BEDROCK_KIND, bedrockOptions, DEFAULT_BASE_URL, isAnthropicModel, modelUrl, staticHeaders } from './api.js';
import { decodeConverseResponse } from './decode-converse-response.js';
import { decodeConverseStream, initConverseStream } from './decode-converse-stream.js';
import { decodeError } from './decode-error.js';
import { decodeInvokeStream, initInvokeStream } from './decode-stream.js';
import { encodeConverseRequest } from './encode-converse.js';
import { encodeInvokeRequest } from './encode-request.js';
import { bedrockOptionsSpec } from './options.js';
import { readEventStream } from './read-event-stream.js';
import { sigV4Signer } from './sign-request.js';

/** InvokeModel: Claude's own Messages body. */
const INVOKE: ProviderCapabilities = {
  // Claude on Bedrock has Anthropic's thinking rules.
  thinking: { minBudget: 1024, forcedToolBlocksThinking: true },
  jsonMode: false,
  // The body is Anthropic's: a messages client's own fields (top_k, ...) and betas reach it.
  nativeProtocol: MESSAGES_EXT,
  // Anthropic's server tools (web search, code execution, ...) are not run by Bedrock.
  serverTools: false,
  // Claude's thinking signatures are valid across Anthropic, Bedrock and Vertex: one family.
  signatures: { family: THINKING_FAMILY, opaque: false },
  // Claude (and the other models Converse serves) count with their own tokenizers.
  tokenizerMargin: 0.35,
};

/**
 * Claude through Converse: its own fields and betas still reach it (in
 * `additionalModelRequestFields`), but Converse sends no JSON-schema format and has no `none`
 * tool choice (encode-converse.ts).
 */
const CONVERSE_CLAUDE: ProviderCapabilities = { ...INVOKE, jsonSchema: false, toolChoiceNone: false };

/** Another model through Converse: a messages client's own fields and betas have nowhere to go. */
const CONVERSE: ProviderCapabilities = { ...CONVERSE_CLAUDE, nativeProtocol: undefined };

/**
 * Amazon Bedrock Runtime upstreams: Anthropic models through InvokeModel (their Messages body),
 * other models through Converse (`options.api` forces one), streamed as AWS event-stream frames,
 * signed with SigV4 or sent with a Bedrock API key.
 */
export const bedrockProvider = {
  type: BEDROCK_KIND,
  genAiName: 'aws.bedrock',
  defaultBaseUrl: DEFAULT_BASE_URL,
  options: bedrockOptionsSpec,
  capabilities(target: Target) {
    if (apiFor(target.upstreamModel, bedrockOptions(target.provider)) === 'invoke') return INVOKE;
    return isAnthropicModel(target.upstreamModel) ? CONVERSE_CLAUDE : CONVERSE;
  },

  stream(call: ProviderCall) {
    const provider = call.target.provider;
    const options = bedrockOptions(provider);
    const model = call.target.upstreamModel;
    const api = apiFor(model, options);
    const stream = call.request.stream;
    const transport = {
      url: modelUrl(provider.baseUrl, options.region, model, api, stream),
      headers: staticHeaders(provider, stream),
      ...(provider.apiKey ? {} : { sign: sigV4Signer(provider) }),
      readEvents: readEventStream,
      decodeError,
    };
    if (api === 'converse') {
      return streamUpstream(call, {
        ...transport,
        body: encodeConverseRequest(call.request, model),
        decodeStream: decodeConverseStream,
        initStream: () => initConverseStream(model),
        decodeResponse: (body) => decodeConverseResponse(body, model),
      });
    }
    return streamUpstream(call, {
      ...transport,
      body: encodeInvokeRequest(call.request, call.target),
      decodeStream: decodeInvokeStream,
      initStream: initInvokeStream,
      decodeResponse: decodeMessage,
    });
  },
} satisfies Provider;

