/**
 * The providers the SDK suite (test/integration/provider-sdks.test.ts) runs every client protocol
 * and scenario against: one row each. A row says where its models are (its catalog entries), what
 * its fake-upstream scripts answer, and how its wire carries what the clients sent. Adding a
 * provider adds one row here (and its module in tools/fake-upstream/wires/).
 */
import { expect } from 'vitest';
import type { FakeUpstream, RecordedRequest } from '../../tools/fake-upstream/index.js';
import { bedrockCatalogDocument } from './bedrock-catalog.js';
import { FAKE_KEY_ENV } from './fake-catalog.js';
import { geminiCatalogDocument } from './gemini-catalog.js';
import { VERTEX_PROJECT_PATH, vertexCatalogDocument } from './vertex-catalog.js';

type Body = any;
export type CatalogDocument = { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };

export interface ProviderRow {
  name: string;
  /** Adds the row's providers and models to the suite's catalog document. */
  catalog(fake: FakeUpstream, doc: CatalogDocument): void;
  /** The model clients call. */
  model: string;
  /** Where a streamed call of `model` goes. */
  streamPath: string;
  /** What every call of the row carries (its credentials, its body's shape). */
  checkRequest(req: RecordedRequest): void;
  text: { script: string; answer: string; usage: { input: number; output: number } };
  /** The output ceiling the upstream was sent. */
  ceiling(body: Body): number;
  /** How a system prompt `Be brief.` and a user turn `Hello` went upstream; absent: not checked. */
  prompt?(body: Body): void;
  /** Two parallel calls (by default get_weather { location: Paris } and get_time {}), then `text` answers the results. */
  tools: {
    script: string;
    /** The two calls the script makes, as [name, arguments], when not the default ones. */
    calls?: [[string, unknown], [string, unknown]];
    /** The call ids the upstream gave, when it gives ids (the clients see them unchanged). */
    ids?: [string, string];
    /** The tool results the second request carried, as [tool name, output text], in the upstream's order. */
    results(body: Body): Array<[string, string]>;
    /** The calls the second request carried back (signatures and ids), beyond their names. */
    checkCalls?(body: Body): void;
    /** A signature of the calls no client may see raw (it travels sealed). */
    hidden?: string;
    /** The first turn's usage as a messages client reads it, when the script reports cache tokens. */
    usage?: Record<string, number>;
  };
  thinking: {
    /** The model that reasons, when not `model`. */
    model?: string;
    script: string;
    thought: string;
    answer: string;
    /** The signature a messages client gets: the upstream's own, sealed (`swy1.`), or none (unsigned reasoning). */
    signature?: string | RegExp;
    /** What the upstream was asked, given the budget (`reasoning_effort: low` is 1024). */
    asked(body: Body, budget: number): void;
    /** What a follow-up turn carried back upstream, in the upstream's form; absent: not sent back. */
    carriedBack?(body: Body): void;
  };
  /** A 429 from the upstream: its script, and the code a chat client's error carries. */
  rateLimit: { script: string; code?: string };
}

const weather = 'get_weather';
const time = 'get_time';

/** Tool results in Anthropic's Messages form (Bedrock InvokeModel, Claude on Vertex): names by tool_use id. */
function messagesResults(body: Body): Array<[string, string]> {
  const names = new Map<string, string>(body.messages[1].content.filter((b: any) => b.type === 'tool_use').map((b: any) => [b.id, b.name]));
  return body.messages[2].content.filter((b: any) => b.type === 'tool_result').map((b: any) => [names.get(b.tool_use_id), b.content[0].text]);
}

/** Tool results in Gemini's form (the Gemini API, Gemini on Vertex): function responses named after their calls. */
function geminiResults(body: Body): Array<[string, string]> {
  return body.contents[2].parts.map((p: any) => [p.functionResponse.name, p.functionResponse.response.output]);
}

const GEMINI_CALL_SIGNATURE = 'EpgCAYs3bq7wZnVuY3Rpb24tY2FsbC1zaWduYXR1cmUtZm9yLXBhcmFsbGVsLWNhbGxz+/=';

/** Gemini's model turn: the thought signature back on the first call, byte for byte, and only there. */
function geminiCalls(body: Body): void {
  expect(body.contents[1]).toEqual({ role: 'model', parts: [
    { functionCall: { name: weather, args: { location: 'Paris' } }, thoughtSignature: GEMINI_CALL_SIGNATURE },
    { functionCall: { name: time, args: {} } },
  ] });
}

const GEMINI_TEXT = { script: 'script:google-gemini/stream-text', answer: 'Switchyard routes every token to Gemini.', usage: { input: 12, output: 7 } };
const GEMINI_THINKING = {
  script: 'script:google-gemini/stream-thinking',
  thought: '**Weighing the question**\n\nThe user asks for the capital of France. It is Paris.',
  answer: 'The capital of France is Paris.',
  // Gemini's thought signatures go back to Gemini only: clients get them sealed.
  signature: /^swy1\./,
  asked: (body: Body, budget: number) => expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: budget, includeThoughts: true }),
};

const BEDROCK_MODEL_PATH = '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0';
const BEDROCK_THOUGHT = 'The user asks for the capital of France. It is Paris.';
const SIGV4 = /^AWS4-HMAC-SHA256 Credential=AKIASWITCHYARDTEST01\/\d{8}\/eu-west-1\/bedrock\/aws4_request, /;

const CLAUDE_THINKING = {
  thought: 'The user asks how to cross a street. This is about pedestrian safety: stop at the kerb, look both ways, use a marked crossing and wait for the signal. I will answer in a short list.',
  answer: 'Stop at the kerb, look left and right, and cross at a marked crossing when the signal shows green.',
  // Claude's signatures hold across the platforms it runs on: a messages client gets it.
  signature: 'EqQBCkgIBxABGAIiQLw0c2l0Y2h5YXJkLXNjcmlwdGVkLXNpZ25hdHVyZS1ub3QtYS1yZWFsLW9uZQbase64+/padding==',
};

export const PROVIDER_TABLE: ProviderRow[] = [
  {
    name: 'Bedrock InvokeModel',
    catalog: (fake, doc) => bedrockCatalogDocument(fake, doc),
    model: 'bd',
    streamPath: `${BEDROCK_MODEL_PATH}/invoke-with-response-stream`,
    checkRequest(req) {
      // Every request signed with the test credentials (the fake verifies the signature too).
      expect(req.headers.authorization).toMatch(SIGV4);
      expect(req.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31' });
      expect(req.body).not.toHaveProperty('model');
      expect(req.body).not.toHaveProperty('stream');
    },
    text: { script: 'script:bedrock/invoke-stream-text', answer: 'Switchyard signs every request to Bedrock.', usage: { input: 14, output: 9 } },
    ceiling: (body) => body.max_tokens,
    prompt: (body) => expect(body).toMatchObject({ system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] }),
    tools: {
      script: 'script:bedrock/invoke-stream-tool-use-parallel',
      ids: ['toolu_bdrk_01Weather', 'toolu_bdrk_01Time'],
      results: messagesResults,
      usage: { input_tokens: 50, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 42 },
    },
    thinking: {
      script: 'script:bedrock/invoke-stream-thinking',
      thought: BEDROCK_THOUGHT,
      answer: 'The capital of France is Paris.',
      signature: 'EqQBCkgIBRABGAIiQBedrockSignedThinkingForSwitchyardTests+/==',
      asked: (body, budget) => expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget }),
      carriedBack: (body) => expect(body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: BEDROCK_THOUGHT, signature: 'EqQBCkgIBRABGAIiQBedrockSignedThinkingForSwitchyardTests+/==' }),
    },
    rateLimit: { script: 'script:bedrock/error-429-throttling', code: 'ThrottlingException' },
  },
  {
    name: 'Bedrock Converse',
    catalog: () => undefined, // the Bedrock row's catalog has its Converse models
    model: 'nova',
    streamPath: '/model/amazon.nova-pro-v1%3A0/converse-stream',
    checkRequest(req) {
      expect(req.headers.authorization).toMatch(SIGV4);
      expect(req.body).toHaveProperty('inferenceConfig');
    },
    text: { script: 'script:bedrock/converse-stream-text', answer: 'Switchyard speaks Converse too.', usage: { input: 11, output: 6 } },
    ceiling: (body) => body.inferenceConfig.maxTokens,
    prompt: (body) => expect(body).toMatchObject({ system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'Hello' }] }] }),
    tools: {
      script: 'script:bedrock/converse-stream-tool-use-parallel',
      ids: ['tooluse_Weather01', 'tooluse_Time02'],
      usage: { input_tokens: 20, cache_read_input_tokens: 1000, output_tokens: 40 },
      results(body) {
        const names = new Map<string, string>(body.messages[1].content.filter((b: any) => b.toolUse).map((b: any) => [b.toolUse.toolUseId, b.toolUse.name]));
        return body.messages[2].content.map((b: any) => [names.get(b.toolResult.toolUseId), b.toolResult.content[0].text]);
      },
      checkCalls(body) {
        expect(body.messages[1].content.filter((b: any) => b.toolUse).map((b: any) => b.toolUse)).toEqual([
          { toolUseId: 'tooluse_Weather01', name: weather, input: { location: 'Paris' } },
          { toolUseId: 'tooluse_Time02', name: time, input: {} },
        ]);
        expect(body.toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual([weather, time]);
      },
    },
    thinking: {
      // Claude through Converse reasons; Nova does not.
      model: 'bdc',
      script: 'script:bedrock/converse-stream-reasoning',
      thought: BEDROCK_THOUGHT,
      answer: 'The capital of France is Paris.',
      signature: 'EqQBCkgIBRABGAIiQConverseSignedThinkingForSwitchyard+/==',
      asked: (body, budget) => expect(body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: budget } }),
      carriedBack: (body) => expect(body.messages[1].content[0]).toEqual({ reasoningContent: { reasoningText: { text: BEDROCK_THOUGHT, signature: 'EqQBCkgIBRABGAIiQConverseSignedThinkingForSwitchyard+/==' } } }),
    },
    rateLimit: { script: 'script:bedrock/error-429-throttling', code: 'ThrottlingException' },
  },
  {
    name: 'Gemini API',
    catalog: (fake, doc) => geminiCatalogDocument(fake, doc),
    model: 'gm',
    streamPath: '/v1beta/models/gemini-2.5-flash:streamGenerateContent',
    checkRequest(req) {
      expect(req.headers['x-goog-api-key']).toBe('sk-fake-upstream');
      expect((req.body as Body).contents.length).toBeGreaterThan(0);
    },
    text: GEMINI_TEXT,
    ceiling: (body) => body.generationConfig.maxOutputTokens,
    prompt: (body) => expect(body).toMatchObject({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] }),
    tools: { script: 'script:google-gemini/stream-function-calls-parallel', results: geminiResults, checkCalls: geminiCalls, hidden: GEMINI_CALL_SIGNATURE },
    thinking: GEMINI_THINKING,
    rateLimit: { script: 'script:google-gemini/error-429-resource-exhausted', code: 'RESOURCE_EXHAUSTED' },
  },
  {
    name: 'Anthropic on Vertex',
    catalog: (fake, doc) => vertexCatalogDocument(fake, doc),
    model: 'vc',
    streamPath: `${VERTEX_PROJECT_PATH}/anthropic/models/claude-sonnet-4-5%4020250929:streamRawPredict`,
    checkRequest(req) {
      // The service account's token from the fake's OAuth endpoint.
      expect(req.headers.authorization).toMatch(/^Bearer ya29\.fake-\d+$/);
      // Anthropic's Messages body, versioned for Vertex, without the model.
      expect(req.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16' });
      expect(req.body).not.toHaveProperty('model');
    },
    text: { script: 'script:anthropic-messages/stream-text', answer: 'Switchyard is a gateway that speaks three wire protocols and bills every request in tokens against a balance.', usage: { input: 12, output: 24 } },
    ceiling: (body) => body.max_tokens,
    tools: { script: 'script:anthropic-messages/stream-parallel-tool-use', results: messagesResults },
    thinking: {
      script: 'script:anthropic-messages/stream-thinking',
      ...CLAUDE_THINKING,
      asked: (body, budget) => expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget }),
    },
    rateLimit: { script: 'script:google-vertex/error-429-resource-exhausted', code: 'RESOURCE_EXHAUSTED' },
  },
  {
    name: 'Gemini on Vertex',
    catalog: () => undefined, // the Vertex row's catalog has both publishers
    model: 'vg',
    streamPath: `${VERTEX_PROJECT_PATH}/google/models/gemini-2.5-flash:streamGenerateContent`,
    checkRequest(req) {
      expect(req.headers.authorization).toMatch(/^Bearer ya29\.fake-\d+$/);
      // Every content with its role: Vertex requires it.
      expect((req.body as Body).contents.every((c: any) => c.role === 'user' || c.role === 'model')).toBe(true);
    },
    text: GEMINI_TEXT,
    ceiling: (body) => body.generationConfig.maxOutputTokens,
    tools: { script: 'script:google-gemini/stream-function-calls-parallel', results: geminiResults, checkCalls: geminiCalls, hidden: GEMINI_CALL_SIGNATURE },
    thinking: GEMINI_THINKING,
    rateLimit: { script: 'status:429?retryAfter=3' },
  },
  {
    name: 'Azure OpenAI',
    catalog(fake, doc) {
      doc.providers['up-azure'] = { type: 'azure-openai', base_url: fake.url, api_key_env: FAKE_KEY_ENV, options: { api_version: '2024-10-21' }, max_retries: 0 };
      doc.models.push({ id: 'az', provider: 'up-azure', upstream_model: 'gpt-4o-mini-prod', price: { input: '0.15', output: '0.60' }, capabilities: { tools: true, reasoning: true, images: true } });
    },
    model: 'az',
    streamPath: '/openai/deployments/gpt-4o-mini-prod/chat/completions',
    checkRequest(req) {
      // The key in api-key (not a bearer token), the deployment in the path, not the body.
      expect(req.headers['api-key']).toBe('sk-fake-upstream');
      expect(req.headers.authorization).toBeUndefined();
      expect(req.body).not.toHaveProperty('model');
    },
    text: { script: 'script:openai-chat/stream-text', answer: 'Switchyard is a gateway that speaks three wire protocols and bills every request in tokens against a balance.', usage: { input: 9, output: 23 } },
    ceiling: (body) => body.max_tokens,
    prompt: (body) => expect(body.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }]),
    tools: {
      script: 'script:openai-chat/stream-tool-calls-parallel',
      calls: [['get_weather', { location: 'San Francisco, CA' }], ['get_stock_price', { ticker: 'GOOG' }]],
      ids: ['call_SwyWeather000000000000001', 'call_SwyStock00000000000000001'],
      results(body) {
        const names = new Map<string, string>(body.messages.flatMap((m: any) => m.tool_calls ?? []).map((c: any) => [c.id, c.function.name]));
        return body.messages.filter((m: any) => m.role === 'tool').map((m: any) => [names.get(m.tool_call_id), m.content]);
      },
    },
    thinking: {
      script: 'script:openai-chat/stream-reasoning-content',
      thought: 'Compare 9.11 and 9.8 digit by digit. Both have 9 as the whole part. The tenths are 1 and 8, and 8 is larger, so 9.8 is the greater number even though 11 looks bigger than 8.',
      answer: '9.8 is greater than 9.11.',
      asked: (body) => expect(body.reasoning_effort).toEqual(expect.any(String)),
    },
    rateLimit: { script: 'script:openai-chat/error-429-rate-limit', code: 'rate_limit_exceeded' },
  },
];
