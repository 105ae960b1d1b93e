import type { Provider, ProviderCall } from '../types.js';
import { streamUpstream } from '../transport/stream-upstream.js';
import { authHeaders, messagesUrl } from './api.js';
import { decodeError } from './decode-error.js';
import { decodeResponse } from './decode-response.js';
import { decodeMessagesStream, initMessagesStream } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';

/** Anthropic `/v1/messages` upstreams. */
export const anthropicProvider: Provider = {
  type: 'anthropic',
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
};
