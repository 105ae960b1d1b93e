import type { ReasoningOrigin } from '../../ir/index.js';

/**
 * Whether a reasoning signature may be shown to a chat or messages client as an Anthropic-style
 * `signature`. Those clients send it back as a signed thinking block, which the decoders take as
 * Anthropic's; only Anthropic's own signatures (and the built-in models', which sign the same way)
 * may travel like that. Another provider's opaque reasoning (a Responses upstream's
 * `encrypted_content`) is withheld, so it can never be forwarded to Anthropic as a signature.
 * An unknown origin (no provider recorded) is passed on as it came.
 */
export function signatureTravels(origin: ReasoningOrigin | undefined): boolean {
  return origin === undefined || origin.provider === 'anthropic' || origin.provider === 'local';
}
