import { anthropicRateLimitHeaders } from './rate-limit-headers.js';
import type { ProtocolAdapter } from '../types.js';
import { decodeMessagesRequest } from './decode-request.js';
import { encodeMessagesError } from './encode-error.js';
import { encodeMessagesResponse } from './encode-response.js';
import { initMessagesStream, messagesStream, type MessagesStreamState } from './encode-stream.js';

export type { MessagesStreamState } from './encode-stream.js';

/** Anthropic messages (`POST /v1/messages`). */
export const anthropicMessages: ProtocolAdapter<MessagesStreamState> = {
  name: 'anthropic-messages',
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  initStream: initMessagesStream,
  stream: messagesStream,
  encodeError: encodeMessagesError,
  rateLimitHeaders: anthropicRateLimitHeaders,
  requestIdHeader: 'request-id',
  versionHeaders: ['anthropic-version', 'vendor-version'],
};
