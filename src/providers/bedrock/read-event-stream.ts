import { EventStreamCodec, getChunkedStream, type Message } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { GatewayError } from '../../ir/index.js';
import type { SseEvent } from '../../util/sse-parse.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** The `event` an exception frame becomes: `exception:<:exception-type>`, its JSON payload as data. */
export const EXCEPTION_PREFIX = 'exception:';

/**
 * An `application/vnd.amazon.eventstream` body -> one event per frame, with each frame's CRCs
 * checked by the AWS codec. An `event` frame becomes `{event: <:event-type>, data: <payload>}`; an
 * `exception` frame `{event: "exception:<:exception-type>", data: <payload>}`; an `error` frame
 * (`:error-code`, `:error-message` headers, no payload) the same with its code and message. The
 * decoders give the payloads their meaning; this is framing only.
 */
export async function* readEventStream(body: AsyncIterable<Uint8Array>): AsyncIterable<SseEvent> {
  let frames: AsyncIterable<Uint8Array>;
  try {
    frames = getChunkedStream(body);
  } catch (e) {
    throw malformed(e);
  }
  const it = frames[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await it.next();
    } catch (e) {
      throw malformed(e);
    }
    if (next.done) return;
    yield toEvent(decodeFrame(next.value));
  }
}

function decodeFrame(bytes: Uint8Array): Message {
  try {
    return codec.decode(bytes);
  } catch (e) {
    throw malformed(e);
  }
}

function toEvent(m: Message): SseEvent {
  const header = (name: string) => {
    const h = m.headers[name];
    return h && h.type === 'string' ? h.value : '';
  };
  const data = toUtf8(m.body);
  switch (header(':message-type')) {
    case 'exception':
      return { event: `${EXCEPTION_PREFIX}${header(':exception-type')}`, data };
    case 'error':
      return { event: `${EXCEPTION_PREFIX}${header(':error-code')}`, data: JSON.stringify({ message: header(':error-message') }) };
    default:
      return { event: header(':event-type'), data };
  }
}

function malformed(e: unknown): unknown {
  // A transport failure (a reset, an idle timeout) keeps its own meaning.
  if (typeof (e as { code?: unknown })?.code === 'string') return e;
  return new GatewayError('bad_gateway', `upstream sent a malformed event stream: ${(e as Error).message}`, { retryable: true, cause: e });
}
