import type { GatewayError } from '../../ir/errors.js';
import { encodeOpenAIError, openAIErrorObject, type OpenAIErrorDialect } from '../shared/openai-error.js';
import type { ErrorBody } from '../types.js';

/**
 * Chat's dialect. Overload is 529 in the IR (Anthropic's status); OpenAI clients know 503 for
 * it, so chat reports 503 unless the error carries an explicit other status.
 */
const CHAT: OpenAIErrorDialect = {
  defaultCodes: {
    authentication: 'invalid_api_key',
    insufficient_balance: 'insufficient_quota',
    overloaded: 'overloaded',
  },
  status: (err) => (err.kind === 'overloaded' && err.status === 529 ? 503 : err.status),
};

/** The `{error:{message,type,param,code,...details}}` object, shared with the in-stream error frame. */
export function chatErrorObject(err: GatewayError): ReturnType<typeof openAIErrorObject> {
  return openAIErrorObject(err, CHAT);
}

/** Chat error response. */
export function encodeChatError(err: GatewayError, _requestId: string): ErrorBody {
  return encodeOpenAIError(err, CHAT);
}
