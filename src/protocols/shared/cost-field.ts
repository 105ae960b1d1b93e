import { nanosToUsd } from '../../ir/usage.js';

/**
 * A request's cost as `usage.cost`: USD, as OpenRouter reports it in every protocol's usage, from
 * the ledger's exact nanodollars (the JSON number's text is exact to 9 decimal places). Absent
 * when the run has not priced the request (an answer encoded outside the pipeline).
 */
export function costField(cost: bigint | undefined): { cost?: number } {
  return cost === undefined ? {} : { cost: Number(nanosToUsd(cost)) };
}
