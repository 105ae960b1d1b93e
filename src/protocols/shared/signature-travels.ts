import type { ReasoningOrigin } from '../../ir/index.js';

/**
 * Whether a reasoning signature may be shown to a chat or messages client as a thinking-block
 * `signature`. Those clients send it back as a signed thinking block, which the decoders take as
 * THINKING_FAMILY's; a family whose signatures are opaque (`origin.opaque`: a Responses upstream's
 * `encrypted_content`) is withheld, so it can never be forwarded upstream as a thinking signature.
 * An unknown origin (no provider recorded) is passed on as it came.
 */
export function signatureTravels(origin: ReasoningOrigin | undefined): boolean {
  return origin?.opaque !== true;
}
