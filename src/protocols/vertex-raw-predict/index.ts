import { anthropicMessages, type MessagesStreamState } from '../anthropic-messages/index.js';
import type { ProtocolAdapter } from '../types.js';
import { decodeRawPredictRequest } from './decode-request.js';

/**
 * Vertex AI's rawPredict and streamRawPredict for Claude
 * (`/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict`), as
 * Claude Code and Anthropic's Vertex SDK send them when pointed at the gateway: Anthropic messages
 * in every respect (answers, SSE events, errors) but for where the model and version travel.
 */
export const vertexRawPredict: ProtocolAdapter<MessagesStreamState> = {
  ...anthropicMessages,
  name: 'vertex-raw-predict',
  decodeRequest: decodeRawPredictRequest,
};
