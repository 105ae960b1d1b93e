/**
 * Signatures of the local models' own reasoning. The local provider is the model here, so it
 * signs what it produced, bound to the model and the exact text, like an upstream signature, and
 * checks the signatures sent back to it as Anthropic does. The gateway never mints signatures for
 * other providers.
 *
 * A signature names its model (`<model, base64url>.<HMAC>`), so a conversation that a fallback
 * moved from one local model to another still verifies, while neither the model nor the text can
 * be changed.
 */
import { createHmac } from 'node:crypto';
import type { Message } from '../../ir/index.js';
import { invalid } from '../../ir/index.js';

const KEY = 'switchyard-local-reasoning-v1';

export function signReasoning(model: string, text: string): string {
  return `${Buffer.from(model).toString('base64url')}.${mac(model, text)}`;
}

/** The model that signed `text` with `signature`, or undefined when the signature does not match. */
export function signerOf(text: string, signature: string): string | undefined {
  const dot = signature.indexOf('.');
  if (dot <= 0) return undefined;
  const model = Buffer.from(signature.slice(0, dot), 'base64url').toString();
  return signature === signReasoning(model, text) ? model : undefined;
}

/**
 * A 400 for the first signed reasoning part whose signature is not a local model's signature of
 * its text (Anthropic: "Invalid `signature` in `thinking` block"). Unsigned reasoning is only text.
 */
export function checkReasoningSignatures(messages: Message[]): void {
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    m.content.forEach((p, j) => {
      if (p.type !== 'reasoning' || !p.signature || p.redacted !== undefined) return;
      if (!signerOf(p.text, p.signature)) {
        throw invalid(`messages.${i}.content.${j}: invalid signature in a thinking block (not this gateway's local model's signature of that text)`, `messages.${i}.content.${j}.signature`);
      }
    });
  });
}

function mac(model: string, text: string): string {
  return createHmac('sha256', KEY).update(`${model}\n${text}`).digest('base64');
}
