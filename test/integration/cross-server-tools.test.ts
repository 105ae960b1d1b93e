/**
 * Anthropic server tools and citations through the real gateway (project scripts
 * stream-web-search.sse / response-web-search.json): a Messages client gets `server_tool_use`,
 * the `web_search_tool_result` and `citations` as the upstream sent them, never a client
 * `tool_use`, and gives them back to an Anthropic upstream unchanged. A chat client of the same
 * upstream gets the text only; a non-Anthropic upstream gets the history without them, and a warning.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';

let started: FakeGateway | undefined;
let fake: FakeUpstream;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  started = await startFakeGateway((f) => ({ catalog: fakeCatalog(f, { maxRetries: 0 }) }));
  ({ fake, gw } = started);
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
beforeEach(() => fake.reset());
afterAll(() => started?.close());

const SRV = 'srvtoolu_01SwyWebSearch000000001';
const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } as const;
const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris today?' };

/** What every form of the scripted answer must show a Messages client. */
function expectWebSearchAnswer(content: Anthropic.ContentBlock[]) {
  expect(content.map((b) => b.type)).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'text', 'text', 'text']);
  expect(content.some((b) => b.type === 'tool_use')).toBe(false);
  expect(content[1]).toMatchObject({ type: 'server_tool_use', id: SRV, name: 'web_search', input: { query: 'weather Paris today' } });
  const result = content[2] as Anthropic.WebSearchToolResultBlock;
  expect(result.tool_use_id).toBe(SRV);
  expect((result.content as Anthropic.WebSearchResultBlock[]).map((r) => r.url)).toEqual(['https://example.org/paris-weather', 'https://example.com/forecast/paris']);
  const cited = content[4] as Anthropic.TextBlock;
  expect(cited.text).toBe('light rain this afternoon, around 9 °C');
  expect(cited.citations).toEqual([expect.objectContaining({ type: 'web_search_result_location', url: 'https://example.org/paris-weather', cited_text: 'Light rain in Paris this afternoon, 9 °C.' })]);
}

describe('Anthropic SDK -> Anthropic upstream with a server tool', () => {
  it('streams server_tool_use, the search result and citations_delta as Anthropic does', async () => {
    fake.script('script:anthropic-messages/stream-web-search');
    const stream = anthropic.messages.stream({ model: 'up-anthropic', max_tokens: 1024, tools: [webSearch], messages: [question] });
    const types: string[] = [];
    stream.on('streamEvent', (ev) => {
      if (ev.type === 'content_block_start') types.push(ev.content_block.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'citations_delta') types.push('citations_delta');
    });
    const message = await stream.finalMessage();
    expect(types).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'text', 'text', 'citations_delta', 'text']);
    expectWebSearchAnswer(message.content);
    expect(message.stop_reason).toBe('end_turn');
    // The server tool reached the upstream as the client sent it.
    expect((fake.requests[0].body as { tools: unknown[] }).tools).toEqual([webSearch]);
  });

  it('answers whole with the same blocks, and the next turn gives them back unchanged', async () => {
    fake.script('script:anthropic-messages/response-web-search');
    const message = await anthropic.messages.create({ model: 'up-anthropic', max_tokens: 1024, tools: [webSearch], messages: [question] });
    expectWebSearchAnswer(message.content);

    fake.script('script:anthropic-messages/stream-text');
    const history: Anthropic.MessageParam[] = [question, { role: 'assistant', content: message.content }, { role: 'user', content: 'And tomorrow?' }];
    await anthropic.messages.create({ model: 'up-anthropic', max_tokens: 1024, tools: [webSearch], messages: history });
    const sent = (fake.requests[1].body as { messages: Array<{ content: unknown }> }).messages[1].content;
    expect(sent).toEqual(JSON.parse(JSON.stringify(message.content)));
  });

  it('an OpenAI upstream gets the history without the server tool blocks and citations, and the client a warning', async () => {
    fake.script('script:anthropic-messages/response-web-search');
    const message = await anthropic.messages.create({ model: 'up-anthropic', max_tokens: 1024, tools: [webSearch], messages: [question] });
    fake.script('script:openai-chat/stream-text');
    const history: Anthropic.MessageParam[] = [question, { role: 'assistant', content: message.content }, { role: 'user', content: 'And tomorrow?' }];
    const res = await anthropic.messages.create({ model: 'up-openai', max_tokens: 1024, messages: history }).withResponse();
    expect(res.response.headers.get('x-switchyard-warnings')).toContain('server tool calls dropped from the conversation (the upstream is not Anthropic): web_search');
    expect(res.response.headers.get('x-switchyard-warnings')).toContain('citations dropped from the conversation');
    const sent = JSON.stringify(fake.requests[1].body);
    expect(sent).not.toContain(SRV);
    expect(sent).toContain('light rain this afternoon, around 9 °C');
  });
});

describe('OpenAI SDK -> Anthropic upstream answering with a server tool', () => {
  it('gets the text and no tool call (server tools have no chat form)', async () => {
    fake.script('script:anthropic-messages/stream-web-search');
    const stream = await openai.chat.completions.create({ model: 'up-anthropic', stream: true, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    let text = '';
    let finish: string | null = null;
    let toolCalls = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      toolCalls += chunk.choices[0]?.delta?.tool_calls?.length ?? 0;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe("I'll look up the weather.Today in Paris: light rain this afternoon, around 9 °C.");
    expect(toolCalls).toBe(0);
    expect(finish).toBe('stop');

    fake.script('script:anthropic-messages/response-web-search');
    const whole = await openai.chat.completions.create({ model: 'up-anthropic', messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(whole.choices[0].message.tool_calls).toBeUndefined();
    expect(whole.choices[0].finish_reason).toBe('stop');
  });
});
