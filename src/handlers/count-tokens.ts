import { countRequestTokensAsync } from '../util/tokenizer.js';
import type { HandlerInput, HandlerResult } from './types.js';
import { findModel, mayUse, modelNotAllowed, type Catalog } from '../routing/index.js';
import { GatewayError } from '../ir/index.js';

/** POST /v1/messages/count_tokens: Anthropic's shape, counted over system, messages and tools. */
export async function countTokens(catalog: Catalog, input: HandlerInput): Promise<HandlerResult> {
  const req = input.protocol.decodeRequest({ max_tokens: 1, ...input.body }, input.headers);
  const model = findModel(catalog, req.model);
  if (!model) {
    throw new GatewayError('not_found', `model "${req.model}" is not in the catalog`, { param: 'model', code: 'model_not_found' });
  }
  if (!mayUse(input.auth?.allowedModels, model.id)) throw modelNotAllowed(model.id, 'model');
  return { kind: 'json', status: 200, body: { input_tokens: await countRequestTokensAsync(req) } };
}
