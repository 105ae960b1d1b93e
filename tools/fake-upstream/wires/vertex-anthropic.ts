import { anthropicCeilingRefusal, anthropicErrorBody, anthropicMalformedEvent } from './anthropic-messages.js';
import { refuseWithoutVertexToken } from './google-gemini.js';
import type { FakeWire } from './wire.js';

/**
 * Anthropic's models on Vertex: `.../publishers/anthropic/models/{model}:rawPredict` or
 * `:streamRawPredict`, Anthropic's body and events. The body has no `model`: the fake reads it
 * (and streaming) from the path. Vertex's OAuth bearer tokens only.
 */
export const vertexAnthropic: FakeWire = {
  protocol: 'anthropic-messages',
  generatedAs: 'anthropic-messages',
  match(pathname) {
    const m = /\/publishers\/anthropic\/models\/([^/]+):(rawPredict|streamRawPredict)$/.exec(pathname);
    if (!m) return undefined;
    const model = decodeURIComponent(m[1]);
    const stream = m[2] === 'streamRawPredict';
    return { view: (body) => ({ ...body, model, stream }) };
  },
  authenticate: refuseWithoutVertexToken,
  errorBody: anthropicErrorBody,
  errorHeaders: () => ({}),
  ceilingRefusal: anthropicCeilingRefusal,
  malformedEvent: anthropicMalformedEvent,
  contentType: 'text/event-stream',
};
