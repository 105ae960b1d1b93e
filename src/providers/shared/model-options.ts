import type { Target } from '../types.js';

/** A string the target's model settings hold under `key` (a fast variant's `service_tier`, `speed`), or undefined. */
export function stringOption(target: Target, key: string): string | undefined {
  const v = target.modelOptions?.[key];
  return typeof v === 'string' ? v : undefined;
}
