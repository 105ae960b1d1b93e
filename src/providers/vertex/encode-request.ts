import type { Request } from '../../ir/index.js';
import { encodeRequest as encodeMessagesRequest, type EncodedRequest } from '../anthropic/encode-request.js';
import type { Target } from '../types.js';
import { VERTEX_ANTHROPIC_VERSION } from './api.js';

export { encodeRequest as encodeGeminiRequest } from '../gemini/encode-request.js';

/**
 * IR Request -> the body of `rawPredict` / `streamRawPredict`: Anthropic's Messages body with the
 * model in the URL instead of the body and the API version in the body (`vertex-2023-10-16`)
 * instead of a header. `stream` stays in the body (Vertex streams only when it is true);
 * `anthropic-beta` stays a header, which Vertex passes on.
 */
export function encodeAnthropicRequest(request: Request, target: Target): EncodedRequest {
  const { body, headers } = encodeMessagesRequest(request, target);
  const { model: _model, ...rest } = body;
  const { 'anthropic-version': _version, ...kept } = headers;
  return { body: { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }, headers: kept };
}
