import { describe, expect, it, vi } from 'vitest';
import { UpstreamBody } from './send-request.js';

const chunk = (text: string) => Buffer.from(text);

describe('UpstreamBody', () => {
  it('gives the whole body as text, chunks joined (a character split between chunks included)', async () => {
    const body = new UpstreamBody();
    const euro = Buffer.from('€');
    body.push(chunk('{"a":"'));
    body.push(euro.subarray(0, 1));
    body.push(Buffer.concat([euro.subarray(1), chunk('"}')]));
    body.end();
    expect(await body.text()).toBe('{"a":"€"}');
  });

  it('pauses the socket while chunks wait for the reader, and resumes it once the reader catches up', async () => {
    const body = new UpstreamBody();
    body.resume = vi.fn();
    const answers = Array.from({ length: 16 }, (_, i) => body.push(chunk(String(i))));
    expect(answers.slice(0, 15).every(Boolean)).toBe(true);
    expect(answers[15]).toBe(false);
    body.end();
    const read: string[] = [];
    for await (const c of body) {
      read.push(c.toString());
      if (read.length === 8) expect(body.resume).toHaveBeenCalledTimes(0);
    }
    expect(body.resume).toHaveBeenCalledTimes(1);
    expect(read).toEqual(Array.from({ length: 16 }, (_, i) => String(i)));
  });

  it('hands chunks to a reader waiting for them as they arrive', async () => {
    const body = new UpstreamBody();
    const read: string[] = [];
    const reading = (async () => {
      for await (const c of body) read.push(c.toString());
    })();
    body.push(chunk('a'));
    await new Promise((r) => setImmediate(r));
    expect(read).toEqual(['a']);
    body.push(chunk('b'));
    body.end();
    await reading;
    expect(read).toEqual(['a', 'b']);
  });

  it('throws the connection error to the reader, dropping what was still queued, as a destroyed stream does', async () => {
    const body = new UpstreamBody();
    body.push(chunk('a'));
    body.fail(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    await expect(body.text()).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it('destroyed before its end: aborts the request (its connection closes) and ends the reader with an error', async () => {
    const body = new UpstreamBody();
    body.abort = vi.fn();
    body.push(chunk('a'));
    const reading = body.text();
    body.destroy();
    expect(body.destroyed).toBe(true);
    expect(body.abort).toHaveBeenCalledWith(expect.objectContaining({ code: 'UND_ERR_ABORTED' }));
    await expect(reading).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    // What still arrives is dropped.
    expect(body.push(chunk('b'))).toBe(true);
  });

  it('destroyed once read to its end: the request is not aborted (its connection goes back to the pool)', async () => {
    const body = new UpstreamBody();
    body.abort = vi.fn();
    body.push(chunk('done'));
    body.end();
    expect(await body.text()).toBe('done');
    body.destroy();
    expect(body.abort).not.toHaveBeenCalled();
  });
});
