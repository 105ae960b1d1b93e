/** Sends one fuzz request to the running server and reads the whole answer within a deadline. */
import type { FuzzRequest } from './build-requests.js';

export interface SseEvent {
  event?: string;
  data: string;
}

export interface FuzzResponse {
  status: number;
  contentType: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  text: string;
  /** Parsed frames when the answer is text/event-stream. */
  events?: SseEvent[];
  ms: number;
}

/** Thrown when the server does not answer (or finish a stream) in time: a hang. */
export class HangError extends Error {
  override name = 'HangError';
}

export function encodeBody(req: FuzzRequest): Uint8Array | undefined {
  if (req.raw !== undefined) return typeof req.raw === 'string' ? Buffer.from(req.raw, 'utf8') : req.raw;
  if (req.body === undefined || req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE') return undefined;
  return Buffer.from(JSON.stringify(req.body), 'utf8');
}

export async function sendRequest(baseUrl: string, req: FuzzRequest, timeoutMs: number): Promise<FuzzResponse> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    // Bytes, never a string: fetch would add `text/plain` to a string body without a content type.
    const res = await fetch(baseUrl + req.path, { method: req.method, headers: req.headers, body: encodeBody(req), signal });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    return {
      status: res.status,
      contentType,
      headers: Object.fromEntries(res.headers),
      text,
      events: contentType.startsWith('text/event-stream') ? parseSse(text) : undefined,
      ms: performance.now() - started,
    };
  } catch (e) {
    if (signal.aborted) throw new HangError(`no complete answer within ${timeoutMs} ms`);
    throw e;
  }
}

/** Frames separated by a blank line; `event:` and `data:` fields (multi-line data joined by \n). */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.replace(/\r\n/g, '\n').split('\n\n')) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length || event) out.push({ event, data: data.join('\n') });
  }
  return out;
}
