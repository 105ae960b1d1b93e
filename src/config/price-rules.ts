/**
 * Multipliers the providers document, applied when a price names only the base rates (the
 * config's `input`/`output`, or a price-table entry without them):
 * - Claude (Anthropic, and Claude on Bedrock and Vertex): a cache read is 0.1x the input price, a
 *   5-minute cache write 1.25x and a 1-hour write 2x (Anthropic, "Prompt caching: pricing").
 * - OpenAI: the `flex` service tier is billed at Batch API rates, half the standard ones
 *   (OpenAI, "Flex processing"). `priority` has no single multiplier (per-model prices), so it
 *   is billed at its configured prices, else the standard ones.
 * Without a documented rule, a missing cache-read or cache-write price is the input price, and a
 * missing 1-hour write is the 5-minute one: never below what the provider bills for plain input.
 */
export interface Multiplier {
  num: bigint;
  den: bigint;
}

export interface DocumentedRules {
  /** Cache rates as multiples of the input rate. */
  cacheRead?: Multiplier;
  cacheWrite?: Multiplier;
  cacheWrite1h?: Multiplier;
  /** Service tiers as multiples of the standard prices. */
  serviceTiers?: Record<string, Multiplier>;
  /** Where the rules come from, for `switchyard prices`. */
  source: string;
}

const CLAUDE: DocumentedRules = {
  cacheRead: { num: 1n, den: 10n },
  cacheWrite: { num: 5n, den: 4n },
  cacheWrite1h: { num: 2n, den: 1n },
  source: "Anthropic's prompt-caching multipliers",
};

const OPENAI: DocumentedRules = {
  serviceTiers: { flex: { num: 1n, den: 2n } },
  source: "OpenAI's flex tier at half price",
};

/** The rules for a model served by provider kind `kind` at `baseUrl` as `upstreamModel`. */
export function documentedRules(kind: string, baseUrl: string, upstreamModel: string): DocumentedRules | undefined {
  if (kind === 'anthropic' || kind === 'vertex-anthropic') return CLAUDE;
  if (kind === 'bedrock' && /(^|[.:/])anthropic\.claude|claude/i.test(upstreamModel)) return CLAUDE;
  if ((kind === 'openai' || kind === 'openai-responses') && isOpenAiHost(baseUrl)) return OPENAI;
  return undefined;
}

function isOpenAiHost(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
