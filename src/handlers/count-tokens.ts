import { countRequestTokensAsync } from '../util/tokenizer.js';
import type { HandlerInput, HandlerResult } from './types.js';
import { requestedModel, type Catalog } from '../routing/index.js';

/** POST /v1/messages/count_tokens: Anthropic's shape, counted over system, messages and tools. */
export async function countTokens(catalog: Catalog, input: HandlerInput): Promise<HandlerResult> {
  const req = input.protocol.decodeRequest({ max_tokens: 1, ...input.body }, input.headers);
  requestedModel(catalog, req.model, input.auth?.allowedModels);
  return { kind: 'json', status: 200, body: { input_tokens: await countRequestTokensAsync(req) } };
}
