import { randomUUID } from 'node:crypto';

/** A request's id: `req_` and 32 hex digits, sent back in `x-request-id` (and a protocol's own header). */
export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '')}`;
}
