import { openaiErrorBody } from './openai-chat.js';
import { openaiCeilingRefusal, sameBody, type FakeWire } from './wire.js';

/** OpenAI Responses: `POST .../responses`. */
export const openaiResponses: FakeWire = {
  protocol: 'openai-responses',
  generatedAs: 'openai-responses',
  match: (pathname) => (pathname.endsWith('/responses') ? { view: sameBody } : undefined),
  errorBody: openaiErrorBody,
  errorHeaders: () => ({}),
  ceilingRefusal: openaiCeilingRefusal,
  malformedEvent: () => 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":\n\n',
  contentType: 'text/event-stream',
};
