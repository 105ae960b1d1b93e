import type { ProviderCapabilities, ProviderRegistry, Target } from './types.js';

/**
 * What the upstream of one target can do: the one capability query (its provider kind answers
 * for its settings and model). The config only names registered kinds; an unregistered one can
 * do nothing (its attempt then fails in runAttempt, which reports it).
 */
export function capabilitiesOf(registry: ProviderRegistry, target: Target): ProviderCapabilities {
  return registry[target.provider.type]?.capabilities(target) ?? UNKNOWN_PROVIDER;
}

const UNKNOWN_PROVIDER: ProviderCapabilities = {
  thinking: { minBudget: 0, forcedToolBlocksThinking: false },
  jsonMode: false,
  serverTools: false,
  signatures: { family: '', opaque: true },
};
