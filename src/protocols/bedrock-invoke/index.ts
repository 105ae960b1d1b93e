import { encodeMessagesResponse } from '../anthropic-messages/encode-response.js';
import { initMessagesStream, messagesStream, type MessagesStreamState } from '../anthropic-messages/encode-stream.js';
import type { ProtocolAdapter } from '../types.js';
import { decodeInvokeRequest } from './decode-request.js';
import { encodeInvokeError } from './encode-error.js';
import { EVENT_STREAM } from './encode-stream.js';

/**
 * Amazon Bedrock's InvokeModel for Claude (`POST /model/{modelId}/invoke` and
 * `/invoke-with-response-stream`), as Claude Code and Anthropic's Bedrock SDK send it when they are
 * pointed at the gateway. The body and the events are Anthropic messages'; what differs is where
 * the model and the version travel, the stream's framing and the error shape.
 */
export const bedrockInvoke: ProtocolAdapter<MessagesStreamState> = {
  name: 'bedrock-invoke',
  decodeRequest: decodeInvokeRequest,
  encodeResponse: encodeMessagesResponse,
  initStream: initMessagesStream,
  stream: messagesStream,
  framing: EVENT_STREAM,
  encodeError: encodeInvokeError,
  rateLimitHeaders: () => ({}),
  requestIdHeader: 'x-amzn-requestid',
};
