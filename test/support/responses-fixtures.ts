/** Helpers shared by the Responses translators' tests (src/protocols/openai-responses). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, StreamEvent } from '../../src/ir/index.js';
import { runTranslator } from '../../src/ir/index.js';
import type { EncodeMeta, SseFrame } from '../../src/protocols/types.js';
import { validateOfficial } from './official-schemas.js';
import { decodeRequest } from '../../src/protocols/openai-responses/decode-request.js';
import { initStream, stream } from '../../src/protocols/openai-responses/encode-stream.js';
import { REFERENCE_PRESENT, TRANSCRIPTS_DIR } from '../../tools/reference.js';

/** The recorded Responses transcripts (reference folder; tests that read them skip without it). */
export const transcriptDir = path.join(TRANSCRIPTS_DIR, 'openai-responses');
export const readTranscript = (name: string) => readFileSync(path.join(transcriptDir, name), 'utf8');
export { REFERENCE_PRESENT };

/** The JSON payloads of a recorded `.sse` file. */
export const sseEvents = (text: string): Array<Record<string, any>> =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5).trim()) as Record<string, any>);

export function metaFor(body: Record<string, unknown> = {}, over: Partial<EncodeMeta> = {}): EncodeMeta {
  const request: Request = decodeRequest({ model: 'gpt-test', input: 'hi', ...body }, {});
  return {
    requestId: 'req-0001',
    created: 1743082658,
    requestedModel: request.model,
    inputTokensEstimate: 10,
    includeUsage: false,
    request,
    ...over,
  };
}

export interface Encoded {
  frames: SseFrame[];
  events: Array<Record<string, any>>;
}

export function encodeEvents(events: StreamEvent[], meta: EncodeMeta = metaFor()): Encoded {
  const frames = runTranslator(stream, initStream(meta), events);
  return { frames, events: frames.map((f) => JSON.parse(f.data) as Record<string, any>) };
}

const EVENT_SCHEMA: Record<string, string> = {
  'response.created': 'ResponseCreatedEvent',
  'response.in_progress': 'ResponseInProgressEvent',
  'response.output_item.added': 'ResponseOutputItemAddedEvent',
  'response.output_item.done': 'ResponseOutputItemDoneEvent',
  'response.content_part.added': 'ResponseContentPartAddedEvent',
  'response.content_part.done': 'ResponseContentPartDoneEvent',
  'response.output_text.delta': 'ResponseTextDeltaEvent',
  'response.output_text.done': 'ResponseTextDoneEvent',
  'response.refusal.delta': 'ResponseRefusalDeltaEvent',
  'response.refusal.done': 'ResponseRefusalDoneEvent',
  'response.reasoning_summary_part.added': 'ResponseReasoningSummaryPartAddedEvent',
  'response.reasoning_summary_part.done': 'ResponseReasoningSummaryPartDoneEvent',
  'response.reasoning_summary_text.delta': 'ResponseReasoningSummaryTextDeltaEvent',
  'response.reasoning_summary_text.done': 'ResponseReasoningSummaryTextDoneEvent',
  'response.function_call_arguments.delta': 'ResponseFunctionCallArgumentsDeltaEvent',
  'response.function_call_arguments.done': 'ResponseFunctionCallArgumentsDoneEvent',
  'response.completed': 'ResponseCompletedEvent',
  'response.incomplete': 'ResponseIncompleteEvent',
  'response.failed': 'ResponseFailedEvent',
  error: 'ResponseErrorEvent',
};

/**
 * Official-schema errors for one event (our `switchyard` extension removed first): against the
 * member schema its type names (readable errors), then against the `ResponseStreamEvent` union.
 */
export function streamEventErrors(ev: Record<string, any>): string[] {
  const copy = structuredClone(ev);
  if (copy.response) delete copy.response.switchyard;
  const member = EVENT_SCHEMA[String(copy.type)];
  if (!member) return [`no official event type ${String(copy.type)}`];
  const errors = validateOfficial('openai', member, copy);
  if (errors.length) return errors.map((e) => `${member}: ${e}`);
  return validateOfficial('openai', 'ResponseStreamEvent', copy).length ? ['not a ResponseStreamEvent'] : [];
}

export function responseErrors(body: Record<string, any>): string[] {
  const copy = structuredClone(body);
  delete copy.switchyard;
  return validateOfficial('openai', 'Response', copy);
}
