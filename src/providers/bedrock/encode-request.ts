import { MESSAGES_EXT, type Request } from '../../ir/index.js';
import { encodeRequest as encodeMessages } from '../anthropic/encode-request.js';
import type { Json } from '../shared/read-json.js';
import type { Target } from '../types.js';
import { BEDROCK_ANTHROPIC_VERSION } from './api.js';

/**
 * IR Request -> InvokeModel body for an Anthropic model: Anthropic's Messages body (the Anthropic
 * provider's encoder), without `model` (it is in the URL) and `stream` (the endpoint says it),
 * with `anthropic_version: bedrock-2023-05-31`, and the `anthropic-beta` header's values as the
 * body's `anthropic_beta` list. What Bedrock does not take stays out: server tools (the pipeline
 * warns), `metadata` (InvokeModel refuses the key) and fast mode's `speed`.
 */
export function encodeInvokeRequest(request: Request, target: Target): Json {
  const { metadata: _metadata, ...fields } = request.ext[MESSAGES_EXT]?.fields ?? {};
  const { body, headers } = encodeMessages({ ...request, ext: { ...request.ext, [MESSAGES_EXT]: { fields } } }, { ...target, modelOptions: undefined });
  const { model: _model, stream: _stream, ...rest } = body;
  const betas = (headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim()).filter(Boolean);
  return { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest, ...(betas.length > 0 ? { anthropic_beta: betas } : {}) };
}
