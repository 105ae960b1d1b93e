/** Builders for the protocol encoders' inputs, shared by their tests in src/protocols. */
import { baseRequest } from './ir-fixtures.js';
import type { Request } from '../../src/ir/request.js';
import type { Response } from '../../src/ir/response.js';
import type { StreamEvent } from '../../src/ir/stream.js';
import { runTranslator, type StreamTranslator } from '../../src/ir/translator.js';
import type { Usage } from '../../src/ir/usage.js';
import type { EncodeMeta, SseFrame } from '../../src/protocols/types.js';

export function testRequest(over: Partial<Request> = {}): Request {
  return baseRequest({ model: 'model-a', messages: [], ...over });
}

export function testMeta(over: Partial<EncodeMeta> = {}): EncodeMeta {
  return {
    requestId: 'req1',
    created: 1700000000,
    requestedModel: 'model-a',
    inputTokensEstimate: 42,
    includeUsage: false,
    request: testRequest(),
    ...over,
  };
}

export function usage(noCache: number, output: number, extra: { cacheRead?: number; cacheWrite?: number; reasoning?: number } = {}): Usage {
  return {
    input: { noCache, cacheRead: extra.cacheRead ?? 0, cacheWrite: extra.cacheWrite ?? 0 },
    output: { total: output, reasoning: extra.reasoning ?? 0 },
  };
}

export function testResponse(over: Partial<Response> = {}): Response {
  return {
    id: 'up1',
    model: 'model-a',
    content: [],
    finish: { unified: 'stop' },
    usage: usage(10, 5),
    attempts: [{ model: 'model-a', outcome: 'ok' }],
    created: 1700000000,
    ...over,
  };
}

/** Run an encoder over events; frames with their data parsed (`[DONE]` stays a string). */
export function encodeAll<S>(t: StreamTranslator<S, StreamEvent, SseFrame>, init: S, events: StreamEvent[]) {
  return runTranslator(t, init, events).map((f) => ({
    ...(f.event !== undefined ? { event: f.event } : {}),
    data: f.data === '[DONE]' ? '[DONE]' : (JSON.parse(f.data) as Record<string, unknown>),
  }));
}
