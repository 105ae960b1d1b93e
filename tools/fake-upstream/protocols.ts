import { bedrockCall, bedrockErrorType } from './bedrock.js';

/** The wire protocols the fake upstream speaks, by request path. */
export type WireProtocol = 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'google-gemini' | 'bedrock';

export function protocolForPath(pathname: string): WireProtocol | undefined {
  if (geminiCall(pathname)) return 'google-gemini';
  if (bedrockCall(pathname)) return 'bedrock';
  if (vertexAnthropicCall(pathname)) return 'anthropic-messages';
  if (pathname.endsWith('/chat/completions')) return 'openai-chat';
  if (pathname.endsWith('/messages')) return 'anthropic-messages';
  if (pathname.endsWith('/responses')) return 'openai-responses';
  return undefined;
}

/**
 * A Gemini call's path: `.../models/{model}:generateContent` or `:streamGenerateContent`. The
 * model is one escaped path segment, so scenario names (`script:google-gemini/stream-text`) fit.
 */
export function geminiCall(pathname: string): { model: string; stream: boolean } | undefined {
  const m = /\/models\/([^/]+):(generateContent|streamGenerateContent)$/.exec(pathname);
  return m ? { model: decodeURIComponent(m[1]), stream: m[2] === 'streamGenerateContent' } : undefined;
}

/**
 * Anthropic's models on Vertex: `.../publishers/anthropic/models/{model}:rawPredict` or
 * `:streamRawPredict`. The body has no `model`: the fake reads it (and streaming) from the path.
 */
export function vertexAnthropicCall(pathname: string): { model: string; stream: boolean } | undefined {
  const m = /\/publishers\/anthropic\/models\/([^/]+):(rawPredict|streamRawPredict)$/.exec(pathname);
  return m ? { model: decodeURIComponent(m[1]), stream: m[2] === 'streamRawPredict' } : undefined;
}

/** A Vertex AI route (`.../projects/{p}/locations/{l}/publishers/...`): it takes OAuth bearer tokens only. */
export function isVertexPath(pathname: string): boolean {
  return /\/projects\/[^/]+\/locations\/[^/]+\/publishers\//.test(pathname);
}

/** Google's canonical status names, for Gemini error bodies. */
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

/** A protocol-shaped error body for a status. */
export function errorBody(protocol: WireProtocol, status: number, message?: string): Record<string, unknown> {
  const [anthropicType, openaiType, openaiCode] = errorTypes(status);
  const text = message ?? `fake upstream error ${status}`;
  if (protocol === 'google-gemini') return { error: { code: status, message: text, status: GOOGLE_STATUS[status] ?? 'UNKNOWN' } };
  // Bedrock's type travels in the x-amzn-errortype header (bedrockErrorHeaders); the body is the message.
  if (protocol === 'bedrock') return { message: message ?? `fake upstream ${bedrockErrorType(status)}` };
  if (protocol === 'anthropic-messages') {
    return { type: 'error', error: { type: anthropicType, message: text }, request_id: 'req_fake' };
  }
  return { error: { message: text, type: openaiType, param: null, code: openaiCode } };
}

function errorTypes(status: number): [string, string, string | null] {
  switch (status) {
    case 400:
      return ['invalid_request_error', 'invalid_request_error', null];
    case 401:
      return ['authentication_error', 'invalid_request_error', 'invalid_api_key'];
    case 403:
      return ['permission_error', 'invalid_request_error', null];
    case 404:
      return ['not_found_error', 'invalid_request_error', 'model_not_found'];
    case 429:
      return ['rate_limit_error', 'requests', 'rate_limit_exceeded'];
    case 529:
      return ['overloaded_error', 'server_error', 'overloaded'];
    case 503:
      return ['overloaded_error', 'server_error', 'service_unavailable'];
    default:
      return ['api_error', 'server_error', null];
  }
}

/** A broken stream event, in the protocol's framing. */
export function malformedEvent(protocol: WireProtocol): string {
  if (protocol === 'openai-chat') return 'data: {"id":"chatcmpl-broken","choices":[{"index":0,,}\n\n';
  if (protocol === 'google-gemini') return 'data: {"candidates": [{"content": {"parts": [{"text":\r\n\r\n';
  if (protocol === 'openai-responses') return 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":\n\n';
  return 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":\n\n';
}
