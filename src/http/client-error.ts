import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Answers what Node's HTTP parser refuses before a request exists (oversized headers, broken
 * chunked encoding, conflicting lengths, a request that never finished arriving), which Node
 * would otherwise answer with an empty body. The protocol is unknown at that point, so the body
 * is one both SDK families read: Anthropic's `{type:"error", error:{type, message}}`, whose
 * `error` object is also OpenAI's `{message, type, param, code}`.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, message] = describe(err);
  const body = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message, param: null, code: null } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function describe(err: NodeJS.ErrnoException): [number, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'the request did not arrive in time'];
    default:
      return [400, `malformed HTTP request${err.code ? ` (${err.code})` : ''}`];
  }
}
