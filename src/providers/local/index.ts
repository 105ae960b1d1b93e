/**
 * The built-in local models: an in-process provider that answers deterministically from the
 * conversation, calls tools, reasons, honours the ceiling, stop sequences and aborts, refuses on
 * the refusal test trigger, and streams at the catalog's tokens per second. No I/O, so it has no
 * `api` / `encode-request` / `decode-*` files: the IR goes in and the IR comes out.
 */
import type { Provider } from '../types.js';
import { generate } from './generate.js';

export const localProvider: Provider = {
  type: 'local',
  stream: (call) => generate(call),
};

export { REFUSAL_TRIGGER } from './read-conversation.js';
