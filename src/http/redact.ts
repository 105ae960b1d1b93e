/** What a credential is replaced with wherever it would reach a client. */
export const REDACTED = '[redacted]';
/** Shorter strings are not credentials (and replacing them would mangle ordinary text). */
const MIN_SECRET_LENGTH = 8;

/**
 * A function that removes every given secret from a text. Provider keys (the configured
 * `api_key_env` values) and the caller's own key must never reach a response, whatever an
 * upstream sends back: some echo the credentials they were sent in their error messages.
 */
export function redactor(secrets: Iterable<string | undefined>): (text: string) => string {
  const list = [...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH))];
  // Longest first, so a key that contains another is removed whole.
  list.sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => {
    for (const secret of list) if (text.includes(secret)) text = text.split(secret).join(REDACTED);
    return text;
  };
}
