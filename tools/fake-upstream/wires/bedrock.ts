import { bedrockErrorHeaders, bedrockErrorType, checkBedrockAuth, corruptFrame, EVENT_STREAM_TYPE, messageToConverse, sseToChunks, sseToConverse } from '../bedrock.js';
import { openaiCeilingRefusal, type FakeWire } from './wire.js';

/**
 * Amazon Bedrock Runtime: `POST /model/{modelId}/invoke` and `/invoke-with-response-stream`
 * (Anthropic's body and events, the events as InvokeModel `chunk` frames), `/converse` and
 * `/converse-stream` (the generated Anthropic answer reshaped into Converse's). SigV4 or a Bearer
 * API key (../bedrock.ts); errors as `{"message"}` with the type in `x-amzn-errortype`.
 */
export const bedrock: FakeWire = {
  protocol: 'bedrock',
  generatedAs: 'anthropic-messages',
  match(pathname) {
    const m = /\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/.exec(pathname);
    if (!m) return undefined;
    const model = decodeURIComponent(m[1]);
    const stream = m[2].endsWith('stream');
    const converse = m[2].startsWith('converse');
    return {
      view(body) {
        const inference = isObject(body.inferenceConfig) ? body.inferenceConfig : {};
        return { ...body, model, stream, ...(typeof inference.maxTokens === 'number' ? { max_tokens: inference.maxTokens } : {}) };
      },
      json: converse ? messageToConverse : undefined,
      events: converse ? sseToConverse : sseToChunks,
    };
  },
  async authenticate(req, ctx) {
    const refused = await checkBedrockAuth(req, ctx.awsCredentials);
    return refused && { status: refused.status, body: { message: refused.message }, headers: bedrockErrorHeaders(refused.type) };
  },
  errorBody: (status, message) => ({ message: message ?? `fake upstream ${bedrockErrorType(status)}` }),
  errorHeaders: (status) => bedrockErrorHeaders(bedrockErrorType(status)),
  ceilingRefusal: openaiCeilingRefusal,
  malformedEvent: corruptFrame,
  contentType: EVENT_STREAM_TYPE,
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
