/**
 * An HTTP receiver for the usage webhook: records every POST (headers, the raw body, its
 * records) and answers as the test says (200 by default), so a suite can make it fail for a while.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  at: number;
  headers: IncomingHttpHeaders;
  raw: string;
  body: { type: string; timestamp: string; data: { records: Array<Record<string, any>> } };
  /** The status this receiver answered. */
  status: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

export interface WebhookReceiver {
  url: string;
  posts: ReceivedPost[];
  /** The records of the POSTs answered with a 2xx (what the gateway counts as delivered), in arrival order. */
  delivered(): Array<Record<string, any>>;
  /** How the next POSTs are answered (from the number of POSTs so far, this one included). */
  answer(fn: (post: ReceivedPost, n: number) => Answer): void;
  /** Resolves once `check` is true (polled), or fails after `timeoutMs`. */
  until(check: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const posts: ReceivedPost[] = [];
  let respond: (post: ReceivedPost, n: number) => Answer = () => ({ status: 200 });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const post: ReceivedPost = { at: Date.now(), headers: req.headers, raw, body: JSON.parse(raw), status: 0 };
      const a = respond(post, posts.length + 1);
      post.status = a.status;
      posts.push(post);
      res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
      res.end(a.status < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/usage`,
    posts,
    delivered: () => posts.filter((p) => p.status >= 200 && p.status < 300).flatMap((p) => p.body.data.records),
    answer(fn) {
      respond = fn;
    },
    async until(check, timeoutMs = 30_000, what = 'the webhook receiver') {
      const end = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${posts.length} POSTs so far)`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Whether a POST's `webhook-signature` verifies with a `whsec_…` secret, as a Standard Webhooks receiver checks it. */
export function verifiesWith(post: ReceivedPost, secret: string): boolean {
  const id = post.headers['webhook-id'];
  const timestamp = post.headers['webhook-timestamp'];
  const header = post.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof header !== 'string') return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${post.raw}`).digest();
  return header.split(' ').some((s) => {
    const [version, sig] = s.split(',');
    const given = Buffer.from(sig ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
