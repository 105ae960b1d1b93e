import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** One parsed server-sent event: the `event:` name (when given) and the joined `data:` text. */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * The gateway's one SSE parser: turns a byte stream into events. Built on eventsource-parser,
 * so CRLF, multi-line `data:`, comments (`: keep-alive`) and chunk boundaries anywhere are
 * handled. The data text is passed on untouched: Anthropic's padded JSON lines and OpenAI's
 * `[DONE]` are for the decoders to judge. A trailing event without its blank line is flushed
 * at the end of the body (some servers omit the final separator).
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const queue: SseEvent[] = [];
  const parser = createParser({
    onEvent(msg: EventSourceMessage) {
      queue.push(msg.event === undefined ? { data: msg.data } : { event: msg.event, data: msg.data });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
  // Flush a pending multi-byte tail and an unterminated last event.
  parser.feed(decoder.decode() + '\n\n');
  while (queue.length > 0) yield queue.shift()!;
}
