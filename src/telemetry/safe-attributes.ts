import { redactor, type Scrubber } from '../util/redact.js';
import type { Attributes, AttributeValue } from './types.js';

type Defined = Exclude<AttributeValue, undefined>;

/**
 * The filter every span and log attribute goes through where it is made: the gateway's one
 * scrubber (util/redact.ts: the known secrets, credential shapes, credential-named fields), then
 * the key this request was presented with. Undefined values are left out.
 */
export function attributeFilter(scrubber: Scrubber, presented?: string): (attrs: Attributes) => Record<string, Defined> {
  const own = presented ? redactor([presented]) : undefined;
  return (attrs) => {
    const defined: Record<string, Defined> = {};
    for (const [name, value] of Object.entries(attrs)) if (value !== undefined) defined[name] = value;
    const out = scrubber.value(defined) as Record<string, Defined>;
    if (!own) return out;
    for (const [name, value] of Object.entries(out)) {
      if (typeof value === 'string') out[name] = own(value);
      else if (Array.isArray(value)) out[name] = value.map(own);
    }
    return out;
  };
}

/** The key a caller presented, from the request's headers (to keep it out of its own trace). */
export function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const auth = headers.authorization;
  const bearer = typeof auth === 'string' ? /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim() : undefined;
  const apiKey = headers['x-api-key'];
  return bearer ?? (typeof apiKey === 'string' ? apiKey.trim() : undefined);
}
