import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { anthropicErrorType } from '../anthropic-messages/encode-error.js';
import type { SseFrame, StreamFraming } from '../types.js';
import { bedrockErrorType } from './encode-error.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });
const NOTHING = new Uint8Array(0);

/** Anthropic's error type -> the first status it stands for, to name the Bedrock exception (`api_error` is 500). */
const STATUS_OF_TYPE: Record<string, number> = Object.fromEntries(
  [529, 504, 503, 502, 500, 429, 413, 404, 403, 401, 400].map((s) => [anthropicErrorType(s), s]),
);

/**
 * Bedrock's response stream (`application/vnd.amazon.eventstream`): each Anthropic stream event is
 * a `chunk` event whose JSON payload holds the event's JSON, base64 in `bytes`, as Bedrock sends
 * Claude's stream; an `error` event is an exception message (`:exception-type`, `{"message"}`), as
 * Bedrock reports a failure after the 200. Bedrock sends no `ping`: it is left out.
 */
export function eventStreamFrame(frame: SseFrame): Uint8Array {
  if (frame.event === 'ping') return NOTHING;
  if (frame.event === 'error') {
    const error = (JSON.parse(frame.data) as { error?: { type?: string; message?: string } }).error ?? {};
    const type = bedrockErrorType(STATUS_OF_TYPE[error.type ?? ''] ?? 500);
    const headers: MessageHeaders = { ':exception-type': str(type[0].toLowerCase() + type.slice(1)), ':content-type': str('application/json'), ':message-type': str('exception') };
    return codec.encode({ headers, body: fromUtf8(JSON.stringify({ message: error.message ?? 'the stream failed' })) });
  }
  const headers: MessageHeaders = { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify({ bytes: Buffer.from(frame.data).toString('base64') })) });
}

export const EVENT_STREAM: StreamFraming = { contentType: 'application/vnd.amazon.eventstream', frame: eventStreamFrame };
