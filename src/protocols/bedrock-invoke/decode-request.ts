import type { Request } from '../../ir/request.js';
import { decodeMessagesRequest } from '../anthropic-messages/decode-request.js';
import type { JsonObject } from '../shared/json.js';
import type { HeaderBag } from '../types.js';

/**
 * Bedrock's InvokeModel body for Claude -> IR. It is an Anthropic messages body with the model in
 * the path (the handler puts it, and whether the call streams, in `model` and `stream`), its API
 * version in `anthropic_version` (Bedrock's, not a messages version: dropped) and its beta flags in
 * `anthropic_beta`, which join the `anthropic-beta` header as /v1/messages carries them.
 */
export function decodeInvokeRequest(body: JsonObject, headers: HeaderBag): Request {
  const { anthropic_version: _version, anthropic_beta: betas, ...messages } = body;
  const flags = [headers['anthropic-beta'], ...(Array.isArray(betas) ? betas.map(String) : [])].filter(Boolean);
  return decodeMessagesRequest(messages, { ...headers, 'anthropic-version': undefined, 'anthropic-beta': flags.length ? flags.join(',') : undefined });
}
