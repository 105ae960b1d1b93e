import { sameBody, type FakeWire } from './wire.js';

/** Anthropic Messages: `POST .../messages`. */
export const anthropicMessages: FakeWire = {
  protocol: 'anthropic-messages',
  generatedAs: 'anthropic-messages',
  match: (pathname) => (pathname.endsWith('/messages') ? { view: sameBody } : undefined),
  errorBody: anthropicErrorBody,
  errorHeaders: () => ({}),
  ceilingRefusal: anthropicCeilingRefusal,
  malformedEvent: anthropicMalformedEvent,
  contentType: 'text/event-stream',
};

/** Anthropic's error type for a status. */
const ANTHROPIC_ERRORS: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  429: 'rate_limit_error', 529: 'overloaded_error', 503: 'overloaded_error',
};

/** Anthropic's error body (Messages, and Claude on Vertex). */
export function anthropicErrorBody(status: number, message?: string): Record<string, unknown> {
  const type = ANTHROPIC_ERRORS[status] ?? 'api_error';
  return { type: 'error', error: { type, message: message ?? `fake upstream error ${status}` }, request_id: 'req_fake' };
}

export function anthropicCeilingRefusal(asked: number, max: number, model: string): string {
  return `max_tokens: ${asked} > ${max}, which is the maximum allowed number of output tokens for ${model}`;
}

export function anthropicMalformedEvent(): string {
  return 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":\n\n';
}
