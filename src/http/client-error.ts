import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../ir/index.js';
import { newRequestId } from './request-id.js';
import { protocolForPath } from './routes.js';

/**
 * Answers what Node's HTTP parser refuses before a request exists (a malformed header name,
 * oversized headers, broken chunked encoding, conflicting lengths, a request that never finished
 * arriving), which Node would otherwise answer with an empty body. The error takes the shape of the
 * route the request line names (read from what the parser received, with the headers that pick a
 * shape on shared routes), as any other error on that route would, and carries a request id in
 * `x-request-id` and the protocol's own header; with no request line (a request that never
 * arrived), chat's shape.
 */
export function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, message] = describe(err);
  const { path, headers } = readRequestHead(err.rawPacket);
  const protocol = protocolForPath(path, headers);
  const requestId = newRequestId();
  const rendered = protocol.encodeError(new GatewayError('invalid_request', message, { status }), requestId);
  const body = JSON.stringify(rendered.body);
  const head: Record<string, string> = {
    ...rendered.headers,
    'x-request-id': requestId,
    ...(protocol.requestIdHeader ? { [protocol.requestIdHeader]: requestId } : {}),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const lines = Object.entries(head).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines}\r\n${body}`);
}

function describe(err: NodeJS.ErrnoException): [number, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'the request did not arrive in time'];
    case 'HPE_INVALID_HEADER_TOKEN':
      return [400, 'malformed HTTP request: a header name has a character HTTP does not allow (HPE_INVALID_HEADER_TOKEN)'];
    default:
      return [400, `malformed HTTP request${err.code ? ` (${err.code})` : ''}`];
  }
}

/** The path of the request line and the well-formed header lines, from the bytes the parser received. */
function readRequestHead(raw: Buffer | undefined): { path: string; headers: Record<string, string> } {
  const text = raw ? raw.subarray(0, 16 * 1024).toString('latin1') : '';
  const [requestLine = '', ...lines] = text.split('\r\n');
  const target = /^[A-Z]+ (\S+) HTTP\/\d(?:\.\d)?$/.exec(requestLine)?.[1] ?? '/';
  const path = target.split('?')[0] ?? '/';
  const headers: Record<string, string> = {};
  for (const line of lines) {
    if (line === '') break;
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (m) headers[m[1].toLowerCase()] = m[2];
  }
  return { path, headers };
}
