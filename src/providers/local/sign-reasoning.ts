/**
 * Signatures of the local models' own reasoning. The local provider is the model here, so it
 * signs what it produced (origin 'local'), bound to the model and the exact text, like an
 * upstream signature. The gateway never mints signatures for other providers.
 */
import { createHmac } from 'node:crypto';

const KEY = 'switchyard-local-reasoning-v1';

export function signReasoning(model: string, text: string): string {
  return createHmac('sha256', KEY).update(`${model}\n${text}`).digest('base64');
}

/** True when `signature` is the local signature of `text` by `model`. */
export function verifyReasoning(model: string, text: string, signature: string): boolean {
  return signReasoning(model, text) === signature;
}
