import { describe, expect, it } from 'vitest';
import { parseSse, type SseEvent } from './sse-parse.js';

async function parseChunks(chunks: string[]): Promise<SseEvent[]> {
  const enc = new TextEncoder();
  async function* body() {
    for (const c of chunks) yield enc.encode(c);
  }
  const out: SseEvent[] = [];
  for await (const ev of parseSse(body())) out.push(ev);
  return out;
}

describe('parseSse', () => {
  it('keeps padded Anthropic JSON and event names', async () => {
    const text = 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0  }\n\nevent: ping\ndata: {"type": "ping"}\n\n';
    expect(await parseChunks([text])).toEqual([
      { event: 'content_block_stop', data: '{"type":"content_block_stop","index":0  }' },
      { event: 'ping', data: '{"type": "ping"}' },
    ]);
  });

  it('reassembles events split at any byte, including inside a multi-byte character', async () => {
    const text = 'data: {"t":"héllo ✓"}\n\ndata: [DONE]\n\n';
    const bytes = new TextEncoder().encode(text);
    const enc = bytes;
    async function* body() {
      for (let i = 0; i < enc.length; i++) yield enc.slice(i, i + 1);
    }
    const out: SseEvent[] = [];
    for await (const ev of parseSse(body())) out.push(ev);
    expect(out).toEqual([{ data: '{"t":"héllo ✓"}' }, { data: '[DONE]' }]);
  });

  it('handles CRLF, comments, multi-line data and a missing final blank line', async () => {
    const out = await parseChunks([': keep-alive\r\n\r\ndata: a\r\ndata: b\r\n\r\n', 'data: last']);
    expect(out).toEqual([{ data: 'a\nb' }, { data: 'last' }]);
  });
});
