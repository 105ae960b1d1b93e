import type { Request } from '../../ir/request.js';
import { decodeMessagesRequest } from '../anthropic-messages/decode-request.js';
import type { JsonObject } from '../shared/json.js';
import type { HeaderBag } from '../types.js';

/**
 * Vertex AI's rawPredict body for Claude -> IR: an Anthropic messages body with the model in the
 * path (the handler puts it in `model`) and Vertex's API version in `anthropic_version`, dropped;
 * the `anthropic-version` and `anthropic-beta` headers travel as on /v1/messages.
 */
export function decodeRawPredictRequest(body: JsonObject, headers: HeaderBag): Request {
  const { anthropic_version: _version, ...messages } = body;
  return decodeMessagesRequest(messages, headers);
}
