import type { ErrorAnswer } from '../transport/types.js';

/**
 * The message of an upstream failure: the error object's own, else the start of a text body,
 * else the bare status — so a client always sees something.
 */
export function pickErrorMessage(err: Record<string, unknown> | undefined, answer: ErrorAnswer): string {
  if (typeof err?.message === 'string' && err.message) return err.message;
  if (typeof answer.body === 'string' && answer.body) return answer.body.slice(0, 500);
  return `upstream answered HTTP ${answer.status}`;
}
