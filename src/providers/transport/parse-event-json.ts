import { GatewayError } from '../../ir/index.js';

/** Parse the JSON payload of an upstream event; garbage from the upstream is a 502. */
export function parseEventJson(data: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (e) {
    throw new GatewayError('bad_gateway', `upstream sent malformed JSON in a stream event: ${data.slice(0, 120)}`, {
      cause: e,
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GatewayError('bad_gateway', 'upstream sent a stream event that is not a JSON object');
  }
  return value as Record<string, unknown>;
}
