import { openAIRateLimitHeaders } from '../shared/openai-rate-limit-headers.js';
import type { ProtocolAdapter } from '../types.js';
import { decodeChatRequest } from './decode-request.js';
import { encodeChatError } from './encode-error.js';
import { encodeChatResponse } from './encode-response.js';
import { chatStream, initChatStream, type ChatStreamState } from './encode-stream.js';

export type { ChatStreamState } from './encode-stream.js';

/** OpenAI chat completions (`POST /v1/chat/completions`). */
export const openaiChat: ProtocolAdapter<ChatStreamState> = {
  name: 'openai-chat',
  decodeRequest: decodeChatRequest,
  encodeResponse: encodeChatResponse,
  initStream: initChatStream,
  stream: chatStream,
  encodeError: encodeChatError,
  rateLimitHeaders: openAIRateLimitHeaders,
};
