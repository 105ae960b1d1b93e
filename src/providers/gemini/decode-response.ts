import { GatewayError, runTranslator, type UpstreamEvent } from '../../ir/index.js';
import { isObject } from '../shared/read-json.js';
import { decodeChunks, initGeminiStream } from './decode-stream.js';

/** A whole `GenerateContentResponse` -> the IR events its stream would have produced. */
export function decodeResponse(body: unknown, callIdPrefix: string): UpstreamEvent[] {
  if (!isObject(body) || isObject(body.error)) {
    throw new GatewayError('bad_gateway', 'upstream sent an unusable generateContent body');
  }
  const events = runTranslator(decodeChunks, initGeminiStream(callIdPrefix), [body]);
  if (events.at(-1)?.type !== 'finish') {
    throw new GatewayError('bad_gateway', 'upstream sent a generateContent body without a finish reason', { retryable: true });
  }
  return events;
}
