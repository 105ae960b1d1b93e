/**
 * The built-in local models as plain data; the catalog (config/default-catalog.ts) adds their one
 * deployment on the local provider (served as `upstreamModel`) and their routing. Prices are femtodollars per token ($3 per million = 3_000_000_000n), shaped like
 * Claude's tiers so billing tests see realistic numbers. None is hidden: README names each, and
 * `GET /v1/models` lists every one a client can call.
 */
import type { BuiltInModel, BuiltInRates } from '../types.js';

/** 2025-01-01T00:00:00Z, a fixed date so the models list is stable. */
const CREATED = 1735689600;
const CONTEXT_WINDOW = 200_000;

/** USD per million tokens, as whole dollars: x1e9 gives femtodollars per token, no floating point. */
function price(inputUsdPerMillion: bigint, outputUsdPerMillion: bigint): BuiltInRates {
  const input = inputUsdPerMillion * 1_000_000_000n;
  const output = outputUsdPerMillion * 1_000_000_000n;
  // Cache reads at 10% of input, 5-minute writes at 125% and 1-hour writes at 200%, as Anthropic prices them.
  return { input, output, cacheRead: input / 10n, cacheWrite: (input * 5n) / 4n, cacheWrite1h: input * 2n };
}

export function localModels(): BuiltInModel[] {
  return [
    {
      id: 'local-sonnet',
      displayName: 'Local Sonnet',
      upstreamModel: 'local-sonnet',
      price: price(3n, 15n),
      contextWindow: CONTEXT_WINDOW,
      maxOutputTokens: 64_000,
      capabilities: { tools: true, reasoning: true, images: true },
      fast: { model: 'local-sonnet-fast' },
      fallbacks: ['local-haiku'],
      aliases: ['local-sonnet-latest'],
      created: CREATED,
      modelOptions: { tokens_per_second: 50 },
    },
    {
      // Serves `fast` for local-sonnet: the same model (so its reasoning signatures are
      // interchangeable), five times the speed, twice the price.
      id: 'local-sonnet-fast',
      displayName: 'Local Sonnet (fast)',
      upstreamModel: 'local-sonnet',
      price: price(6n, 30n),
      contextWindow: CONTEXT_WINDOW,
      maxOutputTokens: 64_000,
      capabilities: { tools: true, reasoning: true, images: true },
      fallbacks: ['local-haiku'],
      aliases: [],
      created: CREATED,
      modelOptions: { tokens_per_second: 250 },
    },
    {
      id: 'local-haiku',
      displayName: 'Local Haiku',
      upstreamModel: 'local-haiku',
      price: price(1n, 5n),
      contextWindow: CONTEXT_WINDOW,
      maxOutputTokens: 32_000,
      // No reasoning, so routing has a model that rejects (or ignores) thinking requests.
      capabilities: { tools: true, reasoning: false, images: true },
      fallbacks: [],
      aliases: ['local-haiku-latest'],
      created: CREATED,
      modelOptions: { tokens_per_second: 100 },
    },
    {
      id: 'local-opus',
      displayName: 'Local Opus',
      upstreamModel: 'local-opus',
      price: price(15n, 75n),
      contextWindow: CONTEXT_WINDOW,
      maxOutputTokens: 32_000,
      capabilities: { tools: true, reasoning: true, images: true },
      fallbacks: ['local-sonnet', 'local-haiku'],
      aliases: ['local-opus-latest'],
      created: CREATED,
      modelOptions: { tokens_per_second: 30 },
    },
    {
      // On the refusal trigger it streams a few tokens before refusing, for "refusal after
      // output" tests (billing of the partial output, fallback after bytes were sent).
      id: 'local-late-refusal',
      displayName: 'Local Late Refusal (test)',
      upstreamModel: 'local-late-refusal',
      price: price(1n, 5n),
      contextWindow: CONTEXT_WINDOW,
      maxOutputTokens: 32_000,
      capabilities: { tools: true, reasoning: true, images: true },
      fallbacks: ['local-haiku'],
      aliases: [],
      created: CREATED,
      modelOptions: { tokens_per_second: 100 },
    },
  ];
}
