import { openaiCeilingRefusal, sameBody, type FakeWire } from './wire.js';

/** OpenAI Chat Completions: `POST .../chat/completions`. */
export const openaiChat: FakeWire = {
  protocol: 'openai-chat',
  generatedAs: 'openai-chat',
  match: (pathname) => (pathname.endsWith('/chat/completions') ? { view: sameBody } : undefined),
  errorBody: openaiErrorBody,
  errorHeaders: () => ({}),
  ceilingRefusal: openaiCeilingRefusal,
  malformedEvent: () => 'data: {"id":"chatcmpl-broken","choices":[{"index":0,,}\n\n',
  contentType: 'text/event-stream',
};

/** OpenAI's error type and code for a status. */
const OPENAI_ERRORS: Record<number, [string, string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', null],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
  529: ['server_error', 'overloaded'],
  503: ['server_error', 'service_unavailable'],
};

/** OpenAI's error body (Chat Completions and Responses). */
export function openaiErrorBody(status: number, message?: string): Record<string, unknown> {
  const [type, code] = OPENAI_ERRORS[status] ?? ['server_error', null];
  return { error: { message: message ?? `fake upstream error ${status}`, type, param: null, code } };
}
