/**
 * Reasoning continuity across protocols. A client carries reasoning from one turn to the next only
 * in the field its protocol has: a Responses `reasoning` item's `encrypted_content`, a thinking
 * block's `signature` or `data` (Messages, and chat's LiteLLM-style `thinking_blocks`). What it
 * sends back must reach only the provider kind that made it (the provider encoders check the
 * origin), so:
 *
 * - reasoning whose field is its own goes out and comes back byte for byte: a Responses upstream's
 *   encrypted_content to a Responses client, an Anthropic signature in a thinking block;
 * - anything else goes out as an envelope, `swy1.` + base64url(JSON {provider, model, opaque,
 *   text?, signature | redacted}), and comes back as exactly that reasoning part with its origin:
 *   Anthropic thinking to a Responses client, a Gemini thought signature or a Responses upstream's
 *   encrypted_content in a chat or messages client's thinking block.
 *
 * The envelope is not a secret: a client could as well send a signed thinking block on
 * /v1/messages. It only saves clients from dropping reasoning they cannot otherwise carry.
 */
import { invalid, RESPONSES_FAMILY, THINKING_FAMILY, type ReasoningOrigin, type ReasoningPart } from '../../ir/index.js';

export const ENVELOPE_PREFIX = 'swy1.';

/** The encrypted_content a Responses client gets back as it came: opaque, of the Responses family. */
export const RESPONSES_ORIGIN: ReasoningOrigin = { provider: RESPONSES_FAMILY, opaque: true };

interface Envelope {
  provider: string;
  model?: string;
  opaque?: boolean;
  /** Responses only: the reasoning's own text (the client's summary may be edited). */
  text?: string;
  signature?: string;
  redacted?: string;
}

export interface ReasoningFacts {
  text: string;
  origin?: ReasoningOrigin;
  signature?: string;
  redacted?: string;
}

type Restored = Omit<ReasoningPart, 'type' | 'ext'>;

function seal(origin: ReasoningOrigin, fields: Pick<Envelope, 'text' | 'signature' | 'redacted'>): string {
  const env: Envelope = {
    provider: origin.provider,
    ...(origin.model ? { model: origin.model } : {}),
    ...(origin.opaque ? { opaque: true } : {}),
    ...fields,
  };
  return ENVELOPE_PREFIX + Buffer.from(JSON.stringify(env), 'utf8').toString('base64url');
}

/** An envelope back into reasoning facts (`text` when the envelope has none); a bad one is a 400 at `param`. */
function open(enc: string, text: string, param: string): Restored {
  const refuse = () => invalid(`${describe(param)} is not a reasoning envelope this gateway produced`, param);
  let env: Partial<Envelope>;
  try {
    env = JSON.parse(Buffer.from(enc.slice(ENVELOPE_PREFIX.length), 'base64url').toString('utf8')) as Partial<Envelope>;
  } catch {
    throw refuse();
  }
  const str = (v: unknown): v is string => typeof v === 'string';
  const optional = (v: unknown) => v === undefined || str(v);
  if (!env || typeof env !== 'object' || !str(env.provider) || !optional(env.text) || !optional(env.signature) || !optional(env.redacted)) throw refuse();
  if ((env.signature === undefined) === (env.redacted === undefined)) throw refuse();
  return {
    text: env.text ?? text,
    ...(env.signature !== undefined ? { signature: env.signature } : {}),
    ...(env.redacted !== undefined ? { redacted: env.redacted } : {}),
    origin: { provider: env.provider, ...(str(env.model) ? { model: env.model } : {}), ...(env.opaque === true ? { opaque: true } : {}) },
  };
}

const describe = (param: string) => param.split('.').pop() ?? param;

/** The `encrypted_content` for a reasoning part, or undefined when it carries nothing opaque. */
export function encryptedContentOf(r: ReasoningFacts): string | undefined {
  if (!r.origin) return undefined;
  if (r.origin.provider === RESPONSES_FAMILY) return r.signature ?? r.redacted;
  if (r.signature === undefined && r.redacted === undefined) return undefined;
  return seal(r.origin, { text: r.text, ...(r.signature !== undefined ? { signature: r.signature } : { redacted: r.redacted }) });
}

/**
 * A client's `encrypted_content` back into reasoning facts: an envelope restores the original
 * part (its own text, not the possibly edited summary); anything else is a Responses upstream's.
 */
export function decodeEncryptedContent(enc: string, summaryText: string, param: string): Restored {
  if (!enc.startsWith(ENVELOPE_PREFIX)) return { text: summaryText, redacted: enc, origin: RESPONSES_ORIGIN };
  return open(enc, summaryText, param);
}

/**
 * What a chat or messages client gets in a thinking block's `signature` (or a redacted block's
 * `data`): the value itself when its origin is not opaque (Anthropic's, which the client sends
 * back as Anthropic's), else an envelope naming its origin (a Gemini thought signature).
 */
export function thinkingBlockValue(origin: ReasoningOrigin | undefined, value: string, field: 'signature' | 'redacted'): string {
  return origin?.opaque === true ? seal(origin, { [field]: value }) : value;
}

/**
 * A thinking block a chat or messages client sent back, as reasoning facts: a signature or data
 * that is an envelope restores its origin; anything else is Anthropic's (THINKING_FAMILY).
 */
export function thinkingBlockFacts(text: string, value: string, field: 'signature' | 'redacted', param: string): Restored {
  if (value.startsWith(ENVELOPE_PREFIX)) return open(value, text, param);
  return { text, [field]: value, origin: { provider: THINKING_FAMILY } };
}
