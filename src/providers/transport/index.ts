export { streamUpstream } from './stream-upstream.js';
export { agentFor, closeAgents } from './agents.js';
export { defaultRetryOptions, retryDelayMs, type RetryOptions } from './retry-policy.js';
export { kindForStatus, isRetryableStatus, parseRetryAfter, upstreamError } from './classify-status.js';
export { parseEventJson } from './parse-event-json.js';
export { abortedError, mapTransportError } from './map-transport-error.js';
export type { ErrorAnswer, UpstreamExchange } from './types.js';
