import { findModel, type Catalog } from '../routing/catalog.js';
import type { HandlerInput } from './types.js';

/**
 * Claude's cloud formats (Bedrock's InvokeModel, Vertex's rawPredict) name the model in the path
 * and whether the answer streams in the operation; the protocol decodes a body that carries both,
 * as /v1/messages does. `stream` undefined: the body's own (Vertex's rawPredict honours it).
 */
export function withPathModel(input: HandlerInput, model: string, stream?: boolean): HandlerInput {
  return { ...input, body: { ...input.body, model, ...(stream === undefined ? {} : { stream }) } };
}

/**
 * The catalog model a Bedrock model id names: the id itself (a catalog id, alias or pattern), else
 * Bedrock's base model id of it, without the inference profile's region prefix, the `anthropic.`
 * vendor prefix and the version suffix (`us.anthropic.claude-sonnet-4-5-20250929-v1:0` ->
 * `claude-sonnet-4-5-20250929`), which the catalog may know as an alias or pattern. Unknown either
 * way: the id as sent, so the 404 names what the client asked for.
 */
export function bedrockModel(catalog: Catalog, modelId: string): string {
  if (findModel(catalog, modelId)) return modelId;
  const base = modelId.replace(/^(?:[a-z]{2,6}(?:-gov)?\.)?anthropic\./, '').replace(/-v\d+(?::\d+)?$/, '');
  return findModel(catalog, base) ? base : modelId;
}
