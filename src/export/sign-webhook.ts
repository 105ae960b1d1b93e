import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks' symmetric signature (standardwebhooks.com, 1.0): HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the secret's bytes, sent in
 * `webhook-signature` as `v1,` and the base64 digest. The secret is written as the convention
 * serializes it: `whsec_` and the base64 of 24 to 64 random bytes.
 */
const PREFIX = 'whsec_';
const MIN_BYTES = 24;
const MAX_BYTES = 64;

/** The signing key of a `whsec_…` secret; throws (naming the variable) when it is not one. */
export function parseWebhookSecret(text: string, name: string): Buffer {
  const b64 = text.startsWith(PREFIX) ? text.slice(PREFIX.length) : undefined;
  const key = b64 !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(b64) ? Buffer.from(b64, 'base64') : undefined;
  if (!key || key.length < MIN_BYTES || key.length > MAX_BYTES) {
    throw new Error(`${name} must be "whsec_" and the base64 of ${MIN_BYTES} to ${MAX_BYTES} random bytes (e.g. "whsec_$(openssl rand -base64 32)")`);
  }
  return key;
}

/** The `webhook-signature` header's value for this message and attempt time (Unix seconds). */
export function signWebhook(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
