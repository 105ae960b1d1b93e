/**
 * A small typed program over the published contract, as a user of openapi-typescript +
 * openapi-fetch writes it: generated/types.ts (openapi-typescript over generated/openapi.yaml)
 * and openapi-fetch's createClient, each credential sent as its security scheme says
 * (ClientBearer: Authorization: Bearer, ClientApiKey: x-api-key, AdminBearer: the admin key).
 * `make lint` type-checks it under `strict`; openapi-fetch.test.ts runs it against the server.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from '../../generated/types.js';

type MessageStreamEvent = components['schemas']['MessageStreamEvent'];

export interface Credentials {
  baseUrl: string;
  clientKey: string;
  adminKey: string;
  /** A user the identity provider signed in (see sdk-support.ts seedUser). */
  userId: string;
}

/** What each call answered, by operationId, for the test to check. */
export type Outcomes = Record<string, number>;

export async function runProgram(c: Credentials): Promise<{ outcomes: Outcomes; streamedText: string; eventTypes: string[] }> {
  const bearer = createClient<paths>({ baseUrl: c.baseUrl, headers: { authorization: `Bearer ${c.clientKey}` } });
  const apiKey = createClient<paths>({ baseUrl: c.baseUrl, headers: { 'x-api-key': c.clientKey } });
  const admin = createClient<paths>({ baseUrl: c.baseUrl, headers: { authorization: `Bearer ${c.adminKey}` } });
  const outcomes: Outcomes = {};
  const note = (operationId: string, response: Response) => (outcomes[operationId] = response.status);

  const root = await bearer.GET('/');
  note('getRoot', root.response);
  const head = await bearer.HEAD('/');
  note('headRoot', head.response);
  note('getOpenApiDocument', (await bearer.GET('/openapi.json')).response);
  note('getMetrics', (await bearer.GET('/metrics', { parseAs: 'text' })).response);

  const chat = await bearer.POST('/v1/chat/completions', { body: { model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] } });
  note('createChatCompletion', chat.response);
  // The 200 is JSON or, with stream: true, events: the object tag tells which arrived.
  const completion = chat.data && 'object' in chat.data && chat.data.object === 'chat.completion' ? chat.data : undefined;
  completion?.choices[0].message.content?.toString();

  const message = await apiKey.POST('/v1/messages', {
    params: { header: { 'anthropic-version': '2023-06-01' } },
    body: { model: 'local-haiku', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] },
  });
  note('createMessage', message.response);
  const count = await apiKey.POST('/v1/messages/count_tokens', { body: { model: 'local-haiku', messages: [{ role: 'user', content: 'Hello' }] } });
  note('countMessageTokens', count.response);

  const created = await bearer.POST('/v1/responses', { body: { model: 'local-haiku', input: 'Hello', max_output_tokens: 8 } });
  note('createResponse', created.response);
  note('compactResponse', (await bearer.POST('/v1/responses/compact', { body: { model: 'local-haiku', input: 'Hello' } })).response);
  const responseId = created.data && 'id' in created.data && typeof created.data.id === 'string' ? created.data.id : 'resp_missing';
  note('getResponse', (await bearer.GET('/v1/responses/{response_id}', { params: { path: { response_id: responseId } } })).response);
  note('listResponseInputItems', (await bearer.GET('/v1/responses/{response_id}/input_items', { params: { path: { response_id: responseId }, query: { limit: 5 } } })).response);
  note('deleteResponse', (await bearer.DELETE('/v1/responses/{response_id}', { params: { path: { response_id: responseId } } })).response);

  note('listModels', (await bearer.GET('/v1/models')).response);
  note('getModel', (await apiKey.GET('/v1/models/{model_id}', { params: { path: { model_id: 'local-haiku' } } })).response);
  const balance = await bearer.GET('/v1/balance');
  note('getBalance', balance.response);
  note('getSpend', (await bearer.GET('/v1/spend', { params: { query: { group_by: 'model' } } })).response);

  const account = await admin.POST('/admin/accounts', { body: { name: 'sdk-program', balance: 1_000_000 } });
  note('adminCreateAccount', account.response);
  const accountId = account.data?.id ?? 'acct_missing';
  note('adminListAccounts', (await admin.GET('/admin/accounts', { params: { query: { limit: 2 } } })).response);
  note('adminGetAccount', (await admin.GET('/admin/accounts/{account_id}', { params: { path: { account_id: accountId } } })).response);
  note('adminAddCredits', (await admin.POST('/admin/accounts/{account_id}/credits', { params: { path: { account_id: accountId } }, body: { amount: 5, reason: 'sdk' } })).response);
  note('adminGetLedger', (await admin.GET('/admin/accounts/{account_id}/ledger', { params: { path: { account_id: accountId } } })).response);
  note('adminGetUsage', (await admin.GET('/admin/accounts/{account_id}/usage', { params: { path: { account_id: accountId } } })).response);
  note('adminGetSpend', (await admin.GET('/admin/spend', { params: { query: { account_id: accountId, group_by: 'day' } } })).response);
  const key = await admin.POST('/admin/keys', { body: { account_id: accountId, name: 'sdk' } });
  note('adminCreateKey', key.response);
  const keyId = key.data?.id ?? 'key_missing';
  note('adminListKeys', (await admin.GET('/admin/keys', { params: { query: { account_id: accountId } } })).response);
  note('adminUpdateKey', (await admin.PATCH('/admin/keys/{key_id}', { params: { path: { key_id: keyId } }, body: { name: 'sdk-renamed' } })).response);
  note('adminRevokeKey', (await admin.DELETE('/admin/keys/{key_id}', { params: { path: { key_id: keyId } } })).response);
  note('adminListDeployments', (await admin.GET('/admin/deployments')).response);
  note('adminListUsers', (await admin.GET('/admin/users', { params: { query: { limit: 5 } } })).response);
  note('adminUpdateUser', (await admin.PATCH('/admin/users/{user_id}', { params: { path: { user_id: c.userId } }, body: { disabled: false } })).response);
  note('adminGetUserBudgets', (await admin.GET('/admin/users/{user_id}/budgets', { params: { path: { user_id: c.userId } } })).response);
  note('adminGetGroupBudgets', (await admin.GET('/admin/groups/{group}/budgets', { params: { path: { group: 'sdk-group' } } })).response);
  note('adminListAudit', (await admin.GET('/admin/audit', { params: { query: { limit: 5 } } })).response);
  note('listUsage', (await bearer.GET('/v1/usage', { params: { query: { limit: 5 } } })).response);

  // Claude's cloud formats: the model in the path, the gateway key as bearer token.
  const invoke = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 8, messages: [{ role: 'user' as const, content: 'Hello' }] };
  note('bedrockInvokeModel', (await bearer.POST('/model/{modelId}/invoke', { params: { path: { modelId: 'local-haiku' } }, body: invoke })).response);
  const bedrockStream = await bearer.POST('/model/{modelId}/invoke-with-response-stream', { params: { path: { modelId: 'local-haiku' } }, body: invoke, parseAs: 'arrayBuffer' });
  note('bedrockInvokeModelWithResponseStream', bedrockStream.response);
  const vertexPath = { project: 'sdk', location: 'us-east5', model: 'local-haiku' };
  const predict = { anthropic_version: 'vertex-2023-10-16', max_tokens: 8, messages: [{ role: 'user' as const, content: 'Hello' }] };
  note('vertexRawPredict', (await bearer.POST('/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict', { params: { path: vertexPath }, body: predict })).response);
  const vertexStream = await bearer.POST('/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:streamRawPredict', { params: { path: vertexPath }, body: { ...predict, stream: true }, parseAs: 'text' });
  note('vertexStreamRawPredict', vertexStream.response);
  note('vertexCountTokens', (await bearer.POST('/v1/projects/{project}/locations/{location}/publishers/anthropic/models/count-tokens:rawPredict', { params: { path: { project: 'sdk', location: 'us-east5' } }, body: { model: 'local-haiku', messages: [{ role: 'user', content: 'Hello' }] } })).response);

  // One streamed call, each event typed by the document's MessageStreamEvent union.
  const stream = await apiKey.POST('/v1/messages', {
    body: { model: 'local-haiku', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
    parseAs: 'stream',
  });
  let streamedText = '';
  const eventTypes: string[] = [];
  for (const event of parseEvents<MessageStreamEvent>(await new Response(stream.response.body).text())) {
    eventTypes.push(event.type);
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') streamedText += event.delta.text;
  }
  return { outcomes, streamedText, eventTypes };
}

/** The `data:` payloads of an SSE body. */
function parseEvents<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as T);
}
