import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 string of `length` characters (rejection sampling: no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const KEY_PREFIX = 'sk-sy-';
/** 43 base62 characters carry 256 bits. */
const KEY_RANDOM_CHARS = 43;
export const KEY_DISPLAY_CHARS = 12;

export const newAccountId = () => `acct_${randomBase62(20)}`;
export const newKeyId = () => `key_${randomBase62(20)}`;
export const newApiKey = () => `${KEY_PREFIX}${randomBase62(KEY_RANDOM_CHARS)}`;

/** Keys carry 256 random bits, so a fast hash is enough: nothing to brute-force. */
export function hashKey(rawKey: string): string {
  return createHash('sha256').update(rawKey, 'utf8').digest('hex');
}
