/**
 * Claude Code's gateway contract (code.claude.com/docs/en/llm-gateway-protocol), the parts a
 * Messages gateway keeps, through the real server with the Anthropic SDK as Claude Code sends:
 * `anthropic-beta` / `anthropic-version` and unknown body fields reach an Anthropic upstream
 * unchanged (and are named in a warning elsewhere), prompt-cache markers are preserved,
 * count_tokens counts everything that is sent, and /v1/models answers in Anthropic's shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
let claude: Anthropic;

const BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14';

beforeAll(async () => {
  fake = await startFakeUpstream();
  const sonnet = { id: 'claude-sonnet-4-5-20250929', provider: 'up-anthropic', upstream_model: 'claude-sonnet-4-5', aliases: ['claude-sonnet-4-5'], price: { input: '3', output: '15' } };
  gw = await startTestGateway({ catalog: fakeCatalog(fake, { models: [sonnet] }) });
  claude = new Anthropic({
    baseURL: gw.url,
    apiKey: gw.key,
    maxRetries: 0,
    defaultHeaders: { 'anthropic-version': '2023-06-01', 'anthropic-beta': BETAS, 'X-Claude-Code-Session-Id': 'sess-1' },
  });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  fake.setScenario({ words: 3 });
});

// Fields Claude Code sends that the gateway has no IR home for.
const extra = { top_k: 5, context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } };
const system = [
  { type: 'text' as const, text: 'x-anthropic-billing-header: cc_version=2.1.197; cc_entrypoint=cli;' },
  { type: 'text' as const, text: 'You are Claude Code.', cache_control: { type: 'ephemeral' as const } },
];

describe("Claude Code's gateway contract", () => {
  it('an Anthropic upstream gets anthropic-beta, anthropic-version, unknown fields and cache markers unchanged', async () => {
    const { response } = await claude.messages
      .create({ model: 'up-anthropic', max_tokens: 64, system, messages: [{ role: 'user', content: 'Hi' }], ...extra } as any)
      .withResponse();
    const sent = fake.requests.at(-1)!;
    expect(sent.headers['anthropic-beta']).toBe(BETAS);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toMatchObject({ ...extra, system });
    expect(response.headers.get('x-switchyard-warnings')).toBeNull();
  });

  it('another upstream cannot take them: each is named in x-switchyard-warnings', async () => {
    const { response } = await claude.messages
      .create({ model: 'up-openai', max_tokens: 64, system, messages: [{ role: 'user', content: 'Hi' }], metadata: { user_id: 'u1' }, ...extra } as any)
      .withResponse();
    expect(fake.requests.at(-1)!.path).toBe('/v1/chat/completions');
    expect(response.headers.get('x-switchyard-warnings')).toBe(
      `fields dropped (the upstream is not Anthropic): top_k, context_management; anthropic-beta dropped (the upstream is not Anthropic): ${BETAS}`,
    );
  });

  it('count_tokens counts tool definitions, tool use, tool results, images and thinking', async () => {
    const base: Anthropic.MessageCountTokensParams = { model: 'up-anthropic', messages: [{ role: 'user', content: 'Weather?' }] };
    const count = async (p: Partial<Anthropic.MessageCountTokensParams>) => (await claude.messages.countTokens({ ...base, ...p })).input_tokens;
    const plain = await count({});
    const tool = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
    expect(await count({ tools: [tool] })).toBeGreaterThan(plain);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    expect(await count({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'Weather?' }] }] })).toBeGreaterThan(plain);
    const turns: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'The user wants the weather in Paris, so I call the tool.', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny, 24 degrees and a light breeze from the west' }] },
    ];
    const full = await count({ tools: [tool], messages: turns });
    const withoutThinking = await count({ tools: [tool], messages: [turns[0], { role: 'assistant', content: [turns[1].content[1] as Anthropic.ToolUseBlockParam] }, turns[2]] });
    const withoutResult = await count({ tools: [tool], messages: [turns[0], turns[1], { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '' }] }] });
    expect(full).toBeGreaterThan(withoutThinking);
    expect(full).toBeGreaterThan(withoutResult);
    expect(withoutThinking).toBeGreaterThan(await count({ tools: [tool] }));
  });

  it("thinking's display and every other thinking field reach an Anthropic upstream as Claude Code sent them", async () => {
    const thinking = { type: 'adaptive', display: 'omitted', future_field: { x: 1 } };
    await claude.messages.create({ model: 'up-anthropic', max_tokens: 2048, thinking, messages: [{ role: 'user', content: 'Hi' }] } as any);
    expect(fake.requests.at(-1)!.body).toMatchObject({ thinking });
    await claude.messages.create({ model: 'up-anthropic', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048, display: 'summarized' }, messages: [{ role: 'user', content: 'Hi' }] });
    expect((fake.requests.at(-1)!.body as { thinking: unknown }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048, display: 'summarized' });
  });

  it('between_tools thinking (SDK 1.14) is accepted: Anthropic gets it as sent, another upstream reasons adaptively', async () => {
    const params: Anthropic.MessageCreateParamsNonStreaming = { model: 'up-anthropic', max_tokens: 2048, thinking: { type: 'between_tools' }, messages: [{ role: 'user', content: 'Hi' }] };
    await claude.messages.create(params);
    expect((fake.requests.at(-1)!.body as { thinking: unknown }).thinking).toEqual({ type: 'between_tools' });
    await claude.messages.create({ ...params, model: 'up-openai' });
    expect(fake.requests.at(-1)!.body).toMatchObject({ reasoning_effort: 'medium' });
  });

  it("output_config.effort is the reasoning effort by level for another upstream (high stays high), and reaches Anthropic unchanged", async () => {
    const ask = (model: string, effort: string) =>
      claude.messages.create({ model, max_tokens: 2048, thinking: { type: 'adaptive' }, output_config: { effort }, messages: [{ role: 'user', content: 'Hi' }] } as any);
    for (const [effort, sent] of [['low', 'low'], ['medium', 'medium'], ['high', 'high'], ['max', 'high']]) {
      await ask('up-openai', effort);
      expect(fake.requests.at(-1)!.body, effort).toMatchObject({ reasoning_effort: sent });
    }
    await ask('up-anthropic', 'high');
    expect(fake.requests.at(-1)!.body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
  });

  it("gateway model discovery (GET /v1/models?limit=1000) lists catalog aliases, which Claude Code can then pick", async () => {
    const listed = await claude.models.list({ limit: 1000 });
    const ids = listed.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5']));
    expect(ids.indexOf('claude-sonnet-4-5')).toBe(ids.indexOf('claude-sonnet-4-5-20250929') + 1);
    expect(listed.data.find((m) => m.id === 'claude-sonnet-4-5')).toMatchObject({ type: 'model', alias_of: 'claude-sonnet-4-5-20250929' });
    // The OpenAI shape lists it too, and the alias answers.
    const openaiList = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } })).json()) as { data: Array<{ id: string; alias_of?: string }> };
    expect(openaiList.data.find((m) => m.id === 'claude-sonnet-4-5')).toMatchObject({ object: 'model', alias_of: 'claude-sonnet-4-5-20250929' });
    await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'claude-sonnet-4-5' });
  });

  it('GET /v1/models answers in Anthropic shape with the catalog ids', async () => {
    const page = await claude.models.list();
    expect(page.data.map((m) => m.id)).toEqual(expect.arrayContaining(['up-openai', 'up-anthropic']));
    expect(page.data[0]).toMatchObject({ type: 'model', display_name: expect.any(String), created_at: expect.any(String) });
  });
});
