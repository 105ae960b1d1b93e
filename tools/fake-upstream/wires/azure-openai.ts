import { openaiErrorBody, openaiChat } from './openai-chat.js';
import type { FakeWire } from './wire.js';

/**
 * Azure OpenAI: `POST /openai/deployments/{deployment}/chat/completions?api-version=...`, OpenAI's
 * Chat Completions body (the deployment in the path names the model) and events. Admitted only
 * with an `api-key` header and an `api-version`, as Azure does.
 */
export const azureOpenai: FakeWire = {
  ...openaiChat,
  match(pathname) {
    const m = /\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(pathname);
    if (!m) return undefined;
    const model = decodeURIComponent(m[1]);
    return { view: (body) => ({ ...body, model }) };
  },
  authenticate(req) {
    if (!req.headers['api-key']) return { status: 401, body: openaiErrorBody(401, 'Access denied due to missing subscription key. Make sure to include the api-key header.') };
    if (!new URL(req.url, 'http://fake').searchParams.get('api-version')) return { status: 404, body: openaiErrorBody(404, 'Resource not found (no api-version)') };
    return undefined;
  },
};
