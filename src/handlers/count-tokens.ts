import { countRequestTokensAsync } from '../util/tokenizer.js';
import type { HandlerInput, HandlerResult } from './types.js';
import { findModel, type Catalog } from '../routing/catalog.js';
import { GatewayError } from '../ir/index.js';

/** POST /v1/messages/count_tokens: Anthropic's shape, counted over system, messages and tools. */
export async function countTokens(catalog: Catalog, input: HandlerInput): Promise<HandlerResult> {
  const req = input.protocol.decodeRequest({ max_tokens: 1, ...input.body }, input.headers);
  if (!findModel(catalog, req.model)) {
    throw new GatewayError('not_found', `model "${req.model}" is not in the catalog`, { param: 'model', code: 'model_not_found' });
  }
  return { kind: 'json', status: 200, body: { input_tokens: await countRequestTokensAsync(req) } };
}
