/**
 * What the fake upstream answers. Chosen per request from the `x-fake-scenario` header, then the
 * body's `model` (e.g. `script:anthropic-messages/stream-thinking`), then the queue given to
 * `script(...)`, then the default set by `setScenario(...)`, else `{ words: 20 }`.
 *
 * Shorthand strings (header or model): `script:<path>[?opts]`, `transcript:<path>[?opts]`,
 * `words:<n>[?opts]`, `status:<code>[?opts]`, or a JSON object. Options are `key=value` pairs joined
 * with `&` (`script:openai-chat/stream-text?chunkDelayMs=20&resetAfterEvents=3`); a bare key is `true`.
 */
export interface Scenario {
  /** One of the project's scripted answers under `scripts/` (extension optional: .sse, .jsonl, .json are tried). */
  script?: string;
  /** A recorded transcript under the reference folder's `transcripts/` (tools/reference.ts), or an absolute path. */
  transcript?: string;
  /** Play a coding-agent model: call the offered shell tool for `RUN: <command>`, then report its result (agent.ts). */
  agent?: boolean;
  /** A generated text stream of this many word chunks (no delay unless chunkDelayMs). */
  words?: number;
  /** Generate this many words even when the request's max_tokens is lower (`true`: use `words`). */
  ignoreMaxTokens?: boolean | number;
  /**
   * The upstream model's output maximum: a request whose ceiling is above it gets a 400 in the
   * protocol's shape and the provider's words, as the real APIs answer.
   */
  maxOutputTokens?: number;
  /** Delay before each event. */
  chunkDelayMs?: number;
  /** Destroy the socket after writing this many events. */
  resetAfterEvents?: number;
  /** Answer with this status and a protocol-shaped error body (with `retry-after` on 429/503/529). */
  status?: number;
  /** The error body quotes the credentials the request came with, as some upstreams and proxies do. */
  echoCredentials?: boolean;
  /** Seconds for `retry-after` (default 1 on 429/503/529). */
  retryAfter?: number;
  /** Fail this many times (with `status`, default 500), then succeed. Counted per scenario. */
  failTimes?: number;
  /** Send a stream event whose JSON is broken, after the first event (or after this many events). */
  malformed?: boolean | number;
  /** Never send headers (a first-byte timeout). */
  hangBeforeHeaders?: boolean;
  /** Send this many events, then end the response cleanly (a stream cut short without a finish). */
  endAfterEvents?: number;
  /** Send this many events, then go silent without closing (an idle timeout). */
  hangAfterEvents?: number;
}

const PREFIXES = ['script:', 'transcript:', 'words:', 'status:'] as const;

/** True when the string names a scenario (and is not an ordinary model name). */
export function isScenarioString(s: string): boolean {
  return s.trimStart().startsWith('{') || PREFIXES.some((p) => s.startsWith(p));
}

export function parseScenario(s: string): Scenario {
  const text = s.trim();
  if (text.startsWith('{')) return JSON.parse(text) as Scenario;
  const [head, query = ''] = splitOnce(text, '?');
  const opts = parseOptions(query);
  if (head.startsWith('script:')) return { ...opts, script: head.slice('script:'.length) };
  if (head.startsWith('transcript:')) return { ...opts, transcript: head.slice('transcript:'.length) };
  if (head.startsWith('words:')) return { ...opts, words: Number(head.slice('words:'.length)) };
  if (head.startsWith('status:')) return { ...opts, status: Number(head.slice('status:'.length)) };
  throw new Error(`fake-upstream: unknown scenario '${s}'`);
}

function parseOptions(query: string): Partial<Scenario> {
  const out: Record<string, unknown> = {};
  for (const pair of query.split('&').filter(Boolean)) {
    const [k, v] = splitOnce(pair, '=');
    out[k] = v === undefined || v === 'true' ? true : v === 'false' ? false : Number.isNaN(Number(v)) ? v : Number(v);
  }
  return out as Partial<Scenario>;
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}
