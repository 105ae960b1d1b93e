/**
 * The server the contract fuzzer runs against: the real gateway on a fresh database, local models
 * unpaced, and models served through the fake upstream over the OpenAI and Anthropic protocols.
 */
import { buildCatalog } from '../../src/config/load-config.js';
import { validateOfficial, withoutSwitchyardExtensions } from '../support/official-schemas.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import type { FuzzContext } from '../../tools/contract-fuzz/build-requests.js';
import type { OfficialChecks } from '../../tools/contract-fuzz/check-response.js';
import { loadContract } from '../../tools/contract-fuzz/load-contract.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/** Small, so the oversized-body mutation stays cheap; 413 behaves the same at any limit. */
export const FUZZ_BODY_LIMIT = 256 * 1024;

export function fuzzCatalog(fakeUrl: string) {
  const local = (id: string, reasoning: boolean) => ({ id, provider: 'local', upstream_model: id, tokens_per_second: 0, capabilities: { reasoning }, price: { input: 1, output: 5 } });
  return buildCatalog(
    {
      providers: {
        local: { type: 'local' },
        fake_openai: { type: 'openai', base_url: `${fakeUrl}/v1`, max_retries: 0 },
        fake_anthropic: { type: 'anthropic', base_url: fakeUrl, max_retries: 0 },
      },
      models: [
        { ...local('local-haiku', false), aliases: ['haiku-latest'] },
        { ...local('local-sonnet', true), fallbacks: ['local-haiku'] },
        { id: 'fake-gpt', provider: 'fake_openai', upstream_model: 'gpt-4o-mini', price: { input: 0.15, output: 0.6 } },
        { id: 'fake-claude', provider: 'fake_anthropic', upstream_model: 'claude-sonnet-4-5', capabilities: { reasoning: true }, price: { input: 3, output: 15 } },
      ],
    },
    {},
    'contract-fuzz catalog',
  );
}

export interface FuzzServer {
  gw: TestGateway;
  fake: FakeUpstream;
  ctx: FuzzContext;
  close(): Promise<void>;
}

export async function startFuzzServer(): Promise<FuzzServer> {
  const fake = await startFakeUpstream();
  const catalog = fuzzCatalog(fake.url);
  const gw = await startTestGateway({ catalog, bodyLimitBytes: FUZZ_BODY_LIMIT });
  // Admin operations act on their own accounts and keys, so the client account keeps its key and money.
  const accounts = [await gw.newAccount(1_000_000_000n, 'admin-a'), await gw.newAccount(0n, 'admin-b')];
  const keyIds: string[] = [];
  for (const a of accounts) for (let i = 0; i < 3; i++) keyIds.push((await gw.ledger.createKey(a.accountId, { name: `k${i}` })).record.id);
  const models = [...catalog.models.keys(), ...catalog.aliases.keys()];
  const ctx: FuzzContext = {
    contract: await loadContract(),
    models,
    clientKey: gw.key,
    adminKey: gw.adminKey,
    accountIds: accounts.map((a) => a.accountId),
    keyIds,
  };
  return { gw, fake, ctx, close: async () => void (await gw.close(), await fake.close()) };
}

const OFFICIAL_BODY = { 'openai-chat': ['openai', 'CreateChatCompletionResponse'], 'anthropic-messages': ['anthropic', 'Message'], 'openai-responses': ['openai', 'Response'] } as const;
const OFFICIAL_EVENT = { 'openai-chat': ['openai', 'CreateChatCompletionStreamResponse'], 'anthropic-messages': ['anthropic', 'MessageStreamEvent'], 'openai-responses': ['openai', 'ResponseStreamEvent'] } as const;

/** Our outputs against the providers' official schemas, minus the gateway's documented extensions. */
export const officialChecks: OfficialChecks = {
  body(protocol, kind, value) {
    const vendor = OFFICIAL_BODY[protocol][0];
    const name = kind === 'error' ? 'ErrorResponse' : OFFICIAL_BODY[protocol][1];
    return validateOfficial(vendor, name, withoutSwitchyardExtensions(documentedElsewhere(value)));
  },
  event(protocol, kind, value) {
    const stripped = withoutSwitchyardExtensions(documentedElsewhere(value));
    if (stripped === undefined) return [];
    const [vendor, schema] = OFFICIAL_EVENT[protocol];
    const name = kind === 'error-event' && protocol !== 'openai-responses' ? 'ErrorResponse' : schema;
    return validateOfficial(vendor, name, stripped);
  },
};

/**
 * What the providers document outside their OpenAPI files. Anthropic documents `request_too_large`
 * (HTTP 413) on its errors page, but its OpenAPI error union omits it: check the rest of such a
 * body with a type the union knows.
 */
function documentedElsewhere(value: unknown): unknown {
  const v = value as { type?: string; error?: { type?: string }; object?: string; tools?: Array<{ type?: string }> };
  if (v?.type === 'error' && v.error?.type === 'request_too_large') return { ...v, error: { ...v.error, type: 'invalid_request_error' } };
  // OpenAI's `namespace` tool (Codex's grouped function tools) is newer than the reference document:
  // a Response echoing the client's tools, or an event carrying that Response, is checked without it.
  const e = value as { response?: unknown };
  if (e?.response && typeof e.response === 'object') return { ...e, response: documentedElsewhere(e.response) };
  if (v?.object === 'response' && Array.isArray(v.tools)) return { ...v, tools: v.tools.filter((t) => t?.type !== 'namespace') };
  return value;
}
