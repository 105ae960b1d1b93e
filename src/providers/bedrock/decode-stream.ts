import { GatewayError, type UpstreamEvent, type StreamTranslator } from '../../ir/index.js';
import { decodeMessagesStream, initMessagesStream, type MessagesStreamState } from '../anthropic/decode-stream.js';
import { str } from '../shared/read-json.js';
import type { SseEvent } from '../../util/sse-parse.js';
import { parseEventJson } from '../transport/parse-event-json.js';
import { decodeStreamException } from './decode-error.js';
import { EXCEPTION_PREFIX } from './read-event-stream.js';

export type InvokeStreamState = MessagesStreamState;
export const initInvokeStream = initMessagesStream;

/**
 * InvokeModelWithResponseStream frames (read-event-stream.ts) -> IR events. Each `chunk` carries
 * `{"bytes": base64(one Anthropic stream event)}` (plus a `p` padding field to ignore), decoded by
 * the Anthropic provider's stream translator. The `amazon-bedrock-invocationMetrics` on
 * `message_stop` is not read: usage is the Anthropic events' own, as in a non-streamed answer.
 * An exception frame is a typed GatewayError.
 */
export const decodeInvokeStream: StreamTranslator<InvokeStreamState, SseEvent, UpstreamEvent> = {
  step(state, frame) {
    const type = frame.event ?? '';
    if (type.startsWith(EXCEPTION_PREFIX)) throw decodeStreamException(type.slice(EXCEPTION_PREFIX.length), frame.data);
    if (type !== 'chunk') return [state, []];
    const bytes = str(parseEventJson(frame.data).bytes);
    if (!bytes) throw new GatewayError('bad_gateway', 'upstream sent a Bedrock chunk without bytes');
    return decodeMessagesStream.step(state, { data: Buffer.from(bytes, 'base64').toString('utf8') });
  },
  end(state) {
    if (!state.started) throw new GatewayError('bad_gateway', 'upstream stream ended before message_start', { retryable: true });
    return decodeMessagesStream.end!(state);
  },
};
