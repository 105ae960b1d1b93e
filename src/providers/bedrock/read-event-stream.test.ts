import { describe, expect, it } from 'vitest';
import { chunkFrame, corruptFrame, exceptionFrame } from '../../../tools/fake-upstream/bedrock.js';
import { readEventStream } from './read-event-stream.js';

describe('readEventStream: frames split anywhere', () => {
  it('reassembles frames split at every byte and keeps exception frames apart', async () => {
    const bytes = Buffer.concat([chunkFrame({ type: 'ping' }), exceptionFrame('validationException', 'bad')]);
    async function* oneByteAtATime() {
      for (const b of bytes) yield new Uint8Array([b]);
    }
    const out = [];
    for await (const ev of readEventStream(oneByteAtATime())) out.push(ev);
    expect(out).toEqual([
      { event: 'chunk', data: JSON.stringify({ bytes: Buffer.from('{"type":"ping"}').toString('base64') }) },
      { event: 'exception:validationException', data: '{"message":"bad"}' },
    ]);
  });

  it('refuses a frame whose CRC is wrong', async () => {
    async function* one() {
      yield corruptFrame();
    }
    await expect(async () => {
      for await (const _ of readEventStream(one())) void _;
    }).rejects.toThrow(/malformed event stream/);
  });
});
