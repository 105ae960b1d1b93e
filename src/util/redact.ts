/**
 * The one place credentials are taken out of what the gateway writes: response texts (the HTTP
 * layer's `redactor`), log lines (`logRedaction`, pino's options) and telemetry attributes
 * (`scrubAttributes`). Two ways, both always applied:
 * - the secrets the gateway knows (provider keys, the admin key, the metrics token, the caller's
 *   key), wherever they appear in a text;
 * - the shapes a credential travels in, whatever its value: `Bearer …`, this gateway's client keys
 *   (`sk-sy-…`), providers' key formats, `key=` in query strings, a URL's password, and any value
 *   under a field named like a credential (`authorization`, `x-api-key`, `password`, …).
 */

/** What a credential is replaced with. */
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

/** Credential shapes, each replaced keeping what names it (`Bearer `, `key=`). */
const SHAPES: Array<[RegExp, string]> = [
  // Authorization schemes: `Bearer <token>`, `Basic <base64>`.
  [/\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${REDACTED}`],
  // A header or field written out in a message: `x-api-key=…`, `"api_key": "…"`, `authorization: …`.
  [/\b((?:x-)?api[-_]?key|x-goog-api-key|authorization|access_token|refresh_token|client_secret|password)(["']?\s*[:=]\s*["']?)(?!Bearer\b|Basic\b|\[redacted\])[^\s"',;&]{4,}/gi, `$1$2${REDACTED}`],
  // Query strings: `?key=…` (Gemini), `&api_key=…`, `&token=…`, signed URLs.
  [/([?&](?:key|api[-_]?key|access_token|token|sig|signature|X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token)=)[^&\s"'#]+/gi, `$1${REDACTED}`],
  // A URL's password: `postgres://user:password@host`.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#\s@"]+:)[^@/\s"]+@/gi, `$1${REDACTED}@`],
  // Key formats: this gateway's client keys, OpenAI's and Anthropic's `sk-…`, Google's `AIza…` and OAuth
  // `ya29.…` tokens, AWS access key ids.
  [/\bsk-[A-Za-z0-9_-]{12,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\bya29\.[0-9A-Za-z._-]{10,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  // A JWT (an identity provider's token presented as a credential): header.payload.signature.
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
];
/**
 * A cheap test before the replacements: most texts have none of these. It matches wherever a
 * shape could (`token` only where a value follows it, `access_token=` or `"refresh_token": `, so
 * the request log's `inputTokens` does not send every line through all the shapes).
 */
const MAYBE = /bearer|basic\s|api[-_]?key|key=|authorization|token["']?\s*[:=]|secret|password|sig(?:nature)?=|amz-|eyJ|:\/\/[^\s"]*@|sk-|AIza|ya29\.|AKIA|ASIA/i;

/** Field names whose value is a credential, whatever it looks like. */
const SECRET_FIELD = /^(authorization|proxy-authorization|x-api-key|api[-_]?key|x-goog-api-key|cookie|set-cookie|password|secret|client_secret|access_token|refresh_token|id_token|private_key|aws_secret_access_key|aws_session_token|x-amz-security-token)$/i;

/** How deep a logged value is walked (deeper is replaced: logs never carry such structures on purpose). */
const MAX_DEPTH = 8;

export interface Scrubber {
  /** A text with the known secrets and every credential shape replaced. */
  text(text: string): string;
  /**
   * A copy of any value (objects, arrays, errors with their causes) with every string scrubbed and
   * every credential-named field replaced. Errors become plain objects (type, message, code,
   * status, stack, cause and their own fields), so nothing of theirs escapes unscrubbed.
   */
  value(value: unknown): unknown;
}

/**
 * A scrubber over `secrets()`, asked again whenever it returns another array (a reloaded catalog
 * brings new provider keys): return the same array while nothing changed.
 */
export function createScrubber(secrets: () => ReadonlyArray<string | undefined> = () => []): Scrubber {
  let known: ReadonlyArray<string | undefined> | undefined;
  let removeKnown: (text: string) => string = (t) => t;
  const text = (input: string): string => {
    const current = secrets();
    if (current !== known) {
      known = current;
      removeKnown = redactor(current);
    }
    let out = removeKnown(input);
    if (!MAYBE.test(out)) return out;
    for (const [shape, replacement] of SHAPES) out = out.replace(shape, replacement);
    return out;
  };
  const walk = (v: unknown, depth: number, seen: WeakSet<object>): unknown => {
    if (typeof v === 'string') return text(v);
    if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? v.toString() : v;
    if (seen.has(v)) return '[circular]';
    if (depth >= MAX_DEPTH) return '[too deep]';
    seen.add(v);
    if (v instanceof Error) return walk(errorFields(v), depth, seen);
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1, seen));
    if (v instanceof URL) return text(v.href);
    if (v instanceof Date) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = SECRET_FIELD.test(k) && x != null && x !== '' ? REDACTED : walk(x, depth + 1, seen);
    return out;
  };
  return { text, value: (v) => walk(v, 0, new WeakSet()) };
}

/** An error's fields as a plain object: pino's own error shape (type, message, stack) plus code, status, cause and its own fields. */
function errorFields(e: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { type: e.name || e.constructor?.name, message: e.message };
  for (const [k, v] of Object.entries(e)) if (v !== undefined && k !== 'name') out[k] = v;
  if (e.stack) out.stack = e.stack;
  if (e.cause !== undefined) out.cause = e.cause;
  if (e instanceof AggregateError) out.errors = e.errors;
  return out;
}

/** Attributes of a span or metric (telemetry) with credentials removed, as logs have them. */
export function scrubAttributes<T extends Record<string, unknown>>(scrubber: Scrubber, attributes: T): T {
  return scrubber.value(attributes) as T;
}

/**
 * pino's options for a logger that writes no credential: every logged object is scrubbed (errors
 * included, with their messages, causes and stacks), then the finished line once more as text,
 * which also covers the message (pino takes it from an error's message after any hook on the
 * arguments would have run).
 */
export function logRedaction(scrubber: Scrubber) {
  return {
    formatters: { log: (object: Record<string, unknown>) => scrubber.value(object) as Record<string, unknown> },
    hooks: { streamWrite: (line: string) => scrubber.text(line) },
  };
}
