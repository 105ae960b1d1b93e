import type { ProviderConfig, ProviderOptionsSpec, Target } from '../types.js';

/**
 * A local model's settings, on its model entry: `tokens_per_second`, the pace of a client's
 * stream (0 or absent: as fast as possible), and `pace_whole_answers`, a non-streamed answer paced
 * too (tests of whole answers in flight; else it is generated at once).
 */
export const localOptionsSpec: ProviderOptionsSpec = {
  modelFields: {
    tokens_per_second: { type: 'number', minimum: 0 },
    pace_whole_answers: { type: 'boolean' },
  },
};

/** The target's pace, as its model's settings give it. */
export function localOptions(target: Target): { tokensPerSecond: number | undefined; paceWholeAnswers: boolean } {
  const rate = target.modelOptions?.tokens_per_second;
  return { tokensPerSecond: typeof rate === 'number' ? rate : undefined, paceWholeAnswers: target.modelOptions?.pace_whole_answers === true };
}

/** The provider entry of the built-in catalog (no network, no key). */
export const LOCAL_PROVIDER: Omit<ProviderConfig, 'type'> = {
  id: 'local',
  baseUrl: 'local://',
  headers: {},
  timeouts: { connectMs: 1_000, firstByteMs: 60_000, idleMs: 60_000, responseMs: 600_000 },
  maxRetries: 0,
};
