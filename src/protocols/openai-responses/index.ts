import { openAIRateLimitHeaders } from '../shared/openai-rate-limit-headers.js';
import type { ProtocolAdapter } from '../types.js';
import { decodeRequest } from './decode-request.js';
import { encodeError } from './encode-error.js';
import { encodeResponse } from './encode-response.js';
import { initStream, stream, type ResponsesStreamState } from './encode-stream.js';

/** The OpenAI Responses client protocol (`POST /v1/responses`). */
export const openaiResponses: ProtocolAdapter<ResponsesStreamState> = {
  name: 'openai-responses',
  decodeRequest,
  encodeResponse,
  initStream,
  stream,
  encodeError,
  rateLimitHeaders: openAIRateLimitHeaders,
};

export type { ResponsesStreamState };
