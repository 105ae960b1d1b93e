import type { IdentityConfig } from '../config/identity.js';
import * as accounts from '../handlers/accounts.js';
import { bedrockModel, withPathModel } from '../handlers/cloud-formats.js';
import { handleCompletion } from '../handlers/complete.js';
import { countTokens } from '../handlers/count-tokens.js';
import { listDeployments } from '../handlers/deployments.js';
import * as keys from '../handlers/keys.js';
import * as users from '../handlers/users.js';
import { listAudit } from '../handlers/audit.js';
import { getMetrics } from '../handlers/metrics.js';
import { getModel, listModels } from '../handlers/models.js';
import * as responses from '../handlers/responses.js';
import { adminSpend, keySpend } from '../handlers/spend.js';
import { listOwnUsage } from '../handlers/usage.js';
import type { Handler } from '../handlers/types.js';
import { ResponseStore, responseRetentionMsFromEnv, type Ledger } from '../ledger/index.js';
import type { PipelineDeps } from '../pipeline/types.js';
import { anthropicMessages } from '../protocols/anthropic-messages/index.js';
import { bedrockInvoke } from '../protocols/bedrock-invoke/index.js';
import { openaiChat } from '../protocols/openai-chat/index.js';
import { openaiResponses } from '../protocols/openai-responses/index.js';
import type { ProtocolAdapter } from '../protocols/types.js';
import { vertexRawPredict } from '../protocols/vertex-raw-predict/index.js';

/** `metrics`: open, or a bearer token when SWITCHYARD_METRICS_TOKEN is set. */
export type AuthMode = 'client' | 'admin' | 'metrics' | 'none';

export interface RouteSpec {
  handler: Handler;
  /** Whose shapes errors take on this route. */
  protocol: ProtocolAdapter<any>;
  /** For routes both kinds of client call: picks the protocol from the request's headers. */
  protocolFor?: (headers: Record<string, string | undefined>) => ProtocolAdapter<any>;
  auth: AuthMode;
}

/** Anthropic clients (they send `anthropic-version`) get Anthropic's shapes on shared routes. */
const byVersionHeader = (headers: Record<string, string | undefined>) => (headers['anthropic-version'] !== undefined ? anthropicMessages : openaiChat);

export interface RouteDeps {
  pipeline: PipelineDeps;
  ledger: Ledger;
  document: Record<string, unknown>;
  /** Stored Responses; by default on the ledger's database, kept SWITCHYARD_RESPONSES_RETENTION_DAYS. */
  responses?: ResponseStore;
  /** The identity provider's settings in use (users' and groups' budgets), read at each request (a reload applies at once). */
  identity?: { readonly config: IdentityConfig | undefined };
}

/** operationId (from generated/openapi.yaml) -> handler. A new endpoint is one line here. */
export function routeTable(deps: RouteDeps): Record<string, RouteSpec> {
  const { pipeline, ledger } = deps;
  const store = deps.responses ?? new ResponseStore(ledger.statements, responseRetentionMsFromEnv());
  const complete: Handler = (input) => handleCompletion(pipeline, input);
  const json = (body: unknown): Handler => async () => ({ kind: 'json', status: 200, body });
  return {
    createChatCompletion: { handler: complete, protocol: openaiChat, auth: 'client' },
    createMessage: { handler: complete, protocol: anthropicMessages, auth: 'client' },
    createResponse: { handler: (i) => responses.createResponse(pipeline, store, i), protocol: openaiResponses, auth: 'client' },
    compactResponse: { handler: (i) => responses.compactResponse(pipeline, store, i), protocol: openaiResponses, auth: 'client' },
    getResponse: { handler: (i) => responses.getResponse(store, i), protocol: openaiResponses, auth: 'client' },
    deleteResponse: { handler: (i) => responses.deleteResponse(store, i), protocol: openaiResponses, auth: 'client' },
    listResponseInputItems: { handler: (i) => responses.listInputItems(store, i), protocol: openaiResponses, auth: 'client' },
    countMessageTokens: { handler: (i) => countTokens(pipeline.catalog, i), protocol: anthropicMessages, auth: 'client' },
    bedrockInvokeModel: { handler: (i) => complete(withPathModel(i, bedrockModel(pipeline.catalog, i.params.modelId), false)), protocol: bedrockInvoke, auth: 'client' },
    bedrockInvokeModelWithResponseStream: {
      handler: (i) => complete(withPathModel(i, bedrockModel(pipeline.catalog, i.params.modelId), true)),
      protocol: bedrockInvoke,
      auth: 'client',
    },
    vertexRawPredict: { handler: (i) => complete(withPathModel(i, i.params.model)), protocol: vertexRawPredict, auth: 'client' },
    vertexStreamRawPredict: { handler: (i) => complete(withPathModel(i, i.params.model, true)), protocol: vertexRawPredict, auth: 'client' },
    vertexCountTokens: { handler: (i) => countTokens(pipeline.catalog, i), protocol: anthropicMessages, auth: 'client' },
    listModels: { handler: async (i) => listModels(pipeline.catalog, i), protocol: openaiChat, protocolFor: byVersionHeader, auth: 'client' },
    getModel: { handler: async (i) => getModel(pipeline.catalog, i), protocol: openaiChat, protocolFor: byVersionHeader, auth: 'client' },
    getBalance: { handler: (i) => accounts.getBalance(ledger, i), protocol: openaiChat, auth: 'client' },
    getSpend: { handler: (i) => keySpend(ledger, i), protocol: openaiChat, auth: 'client' },
    listUsage: { handler: (i) => listOwnUsage(ledger, i), protocol: openaiChat, auth: 'client' },
    adminGetSpend: { handler: (i) => adminSpend(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminCreateAccount: { handler: (i) => accounts.createAccount(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminListAccounts: { handler: (i) => accounts.listAccounts(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminGetAccount: { handler: (i) => accounts.getAccount(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminAddCredits: { handler: (i) => accounts.addCredits(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminGetLedger: { handler: (i) => accounts.getLedger(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminGetUsage: { handler: (i) => accounts.getUsage(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminCreateKey: { handler: (i) => keys.createKey(ledger, pipeline.catalog, i), protocol: openaiChat, auth: 'admin' },
    adminListKeys: { handler: (i) => keys.listKeys(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminUpdateKey: { handler: (i) => keys.updateKey(ledger, pipeline.catalog, i), protocol: openaiChat, auth: 'admin' },
    adminRevokeKey: { handler: (i) => keys.revokeKey(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminListUsers: { handler: (i) => users.listUsers(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminUpdateUser: { handler: (i) => users.updateUser(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminGetUserBudgets: { handler: (i) => users.getUserBudgets(ledger, deps.identity?.config, i), protocol: openaiChat, auth: 'admin' },
    adminGetGroupBudgets: { handler: (i) => users.getGroupBudgets(ledger, deps.identity?.config, i), protocol: openaiChat, auth: 'admin' },
    adminListAudit: { handler: (i) => listAudit(ledger, i), protocol: openaiChat, auth: 'admin' },
    adminListDeployments: { handler: async () => listDeployments(pipeline.catalog, pipeline.health, pipeline.now()), protocol: openaiChat, auth: 'admin' },
    getOpenApiDocument: { handler: json(deps.document), protocol: openaiChat, auth: 'none' },
    getRoot: { handler: json({ name: 'switchyard', status: 'ok' }), protocol: openaiChat, auth: 'none' },
    getMetrics: { handler: getMetrics, protocol: openaiChat, auth: 'metrics' },
    headRoot: { handler: async () => ({ kind: 'empty', status: 200 }), protocol: openaiChat, auth: 'none' },
  };
}

/**
 * The protocol whose error shape an unrouted request gets (404/405 and the like), from the path as
 * the routes decide it: only the routes both kinds of client call (/v1/models) look at the headers,
 * and with the same rule, so an admin or chat error never comes in Anthropic's shape.
 */
export function protocolForPath(path: string, headers: Record<string, string | undefined>): ProtocolAdapter<any> {
  if (path.startsWith('/v1/messages')) return anthropicMessages;
  if (path.startsWith('/model/')) return bedrockInvoke;
  if (path.startsWith('/v1/projects/')) return vertexRawPredict;
  if (path.startsWith('/v1/responses')) return openaiResponses;
  if (path === '/v1/models' || path.startsWith('/v1/models/')) return byVersionHeader(headers);
  return openaiChat;
}
