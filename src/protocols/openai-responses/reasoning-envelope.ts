/**
 * Reasoning continuity on the Responses protocol. A Responses client (Codex, the AI SDK) carries
 * reasoning across turns only as a `reasoning` item's opaque `encrypted_content`. So:
 *
 * - reasoning a Responses upstream produced goes out and comes back as its own encrypted_content,
 *   byte for byte;
 * - reasoning another provider produced with a signature or redacted data (Anthropic, local) goes
 *   out as an envelope, `swy1.` + base64url(JSON {provider, model, text, signature | redacted}),
 *   and comes back as exactly that reasoning part with its origin, so the provider encoders send
 *   the signature back only to the provider kind that made it (they check the origin).
 *
 * The envelope is not a secret: a client could as well send a signed thinking block on
 * /v1/messages. It only saves clients from dropping reasoning they cannot otherwise carry.
 */
import { invalid, RESPONSES_FAMILY, type ReasoningOrigin, type ReasoningPart } from '../../ir/index.js';

export const ENVELOPE_PREFIX = 'swy1.';

/** The encrypted_content a Responses client gets back as it came: opaque, of the Responses family. */
export const RESPONSES_ORIGIN: ReasoningOrigin = { provider: RESPONSES_FAMILY, opaque: true };

interface Envelope {
  provider: string;
  model?: string;
  opaque?: boolean;
  text: string;
  signature?: string;
  redacted?: string;
}

export interface ReasoningFacts {
  text: string;
  origin?: ReasoningOrigin;
  signature?: string;
  redacted?: string;
}

/** The `encrypted_content` for a reasoning part, or undefined when it carries nothing opaque. */
export function encryptedContentOf(r: ReasoningFacts): string | undefined {
  if (!r.origin) return undefined;
  if (r.origin.provider === RESPONSES_FAMILY) return r.signature ?? r.redacted;
  if (r.signature === undefined && r.redacted === undefined) return undefined;
  const env: Envelope = {
    provider: r.origin.provider,
    ...(r.origin.model ? { model: r.origin.model } : {}),
    ...(r.origin.opaque ? { opaque: true } : {}),
    text: r.text,
    ...(r.signature !== undefined ? { signature: r.signature } : {}),
    ...(r.redacted !== undefined ? { redacted: r.redacted } : {}),
  };
  return ENVELOPE_PREFIX + Buffer.from(JSON.stringify(env), 'utf8').toString('base64url');
}

/**
 * A client's `encrypted_content` back into reasoning facts: an envelope restores the original
 * part (its own text, not the possibly edited summary); anything else is a Responses upstream's.
 */
export function decodeEncryptedContent(enc: string, summaryText: string, param: string): Omit<ReasoningPart, 'type' | 'ext'> {
  if (!enc.startsWith(ENVELOPE_PREFIX)) return { text: summaryText, redacted: enc, origin: RESPONSES_ORIGIN };
  let env: Partial<Envelope>;
  try {
    env = JSON.parse(Buffer.from(enc.slice(ENVELOPE_PREFIX.length), 'base64url').toString('utf8')) as Partial<Envelope>;
  } catch {
    throw invalid('encrypted_content is not a reasoning envelope this gateway produced', param);
  }
  const str = (v: unknown) => typeof v === 'string';
  if (!env || !str(env.provider) || !str(env.text) || (env.signature === undefined && env.redacted === undefined)) {
    throw invalid('encrypted_content is not a reasoning envelope this gateway produced', param);
  }
  if ((env.signature !== undefined && !str(env.signature)) || (env.redacted !== undefined && !str(env.redacted))) {
    throw invalid('encrypted_content is not a reasoning envelope this gateway produced', param);
  }
  return {
    text: env.text as string,
    ...(env.signature !== undefined ? { signature: env.signature } : {}),
    ...(env.redacted !== undefined ? { redacted: env.redacted } : {}),
    origin: { provider: env.provider as string, ...(str(env.model) ? { model: env.model } : {}), ...(env.opaque === true ? { opaque: true } : {}) },
  };
}
