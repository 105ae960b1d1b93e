import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { describe, expect, it } from 'vitest';
import { eventStreamFrame } from './encode-stream.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const headersOf = (bytes: Uint8Array) => Object.fromEntries(Object.entries(codec.decode(bytes).headers).map(([k, v]) => [k, v.value]));

describe("Bedrock's event stream", () => {
  it('carries an Anthropic event as a chunk, its JSON base64 in bytes', () => {
    const event = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'héllo' } };
    const frame = eventStreamFrame({ event: 'content_block_delta', data: JSON.stringify(event) });
    expect(headersOf(frame)).toEqual({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' });
    const { bytes } = JSON.parse(toUtf8(codec.decode(frame).body)) as { bytes: string };
    expect(JSON.parse(Buffer.from(bytes, 'base64').toString('utf8'))).toEqual(event);
  });

  it('turns an error event into the exception Bedrock sends after the 200, named for its status', () => {
    const overloaded = eventStreamFrame({ event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }) });
    expect(headersOf(overloaded)).toMatchObject({ ':message-type': 'exception', ':exception-type': 'serviceUnavailableException' });
    expect(JSON.parse(toUtf8(codec.decode(overloaded).body))).toEqual({ message: 'busy' });
    const internal = eventStreamFrame({ event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'x' } }) });
    expect(headersOf(internal)[':exception-type']).toBe('internalServerException');
  });

  it('leaves out ping, which Bedrock does not send', () => {
    expect(eventStreamFrame({ event: 'ping', data: '{"type":"ping"}' })).toHaveLength(0);
  });
});
